package shardlink

import (
	"bufio"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/valyala/fasthttp"
)

// A node that stops answering while TCP stays up loses its link once it
// has sent nothing for three keep-alive intervals with a request
// waiting: the request written fails as lost (as on a link that dies),
// and the link takes no more (they go the pool's way).
func TestASilentNodeLosesItsLink(t *testing.T) {
	f := serveFake(t, fakeConfig{KeepAliveMs: "50", Silent: true})
	c := open(t, f.addr)
	req := post("/write", "x")
	defer fasthttp.ReleaseRequest(req)
	var resp fasthttp.Response
	err := c.Do(req, &resp, time.Now().Add(5*time.Second), 1<<20)
	var lost *LostError
	require.ErrorAs(t, err, &lost, "a request on a silent link")
	select {
	case <-c.Done():
	default:
		t.Fatal("the silent link did not end")
	}
	require.ErrorIs(t, c.Do(req, &resp, time.Now().Add(5*time.Second), 1<<20), ErrNotTaken)
}

// A node that states no keep-alive (an older one) is never judged
// silent: its requests wait for their own deadlines.
func TestANodeWithoutKeepAlivesIsNotJudged(t *testing.T) {
	f := serveFake(t, fakeConfig{Silent: true})
	c := open(t, f.addr)
	req := post("/write", "x")
	defer fasthttp.ReleaseRequest(req)
	var resp fasthttp.Response
	require.ErrorIs(t, c.Do(req, &resp, time.Now().Add(300*time.Millisecond), 1<<20), fasthttp.ErrTimeout)
	require.True(t, c.Alive())
}

// A request parked at the node far longer than three keep-alive
// intervals keeps its link: the node's keep-alives are heard.
func TestAParkedRequestKeepsItsLink(t *testing.T) {
	g := newGate(t)
	n := serveNode(t, ServerConfig{KeepAlive: 20 * time.Millisecond}, func(ctx *fasthttp.RequestCtx) {
		if string(ctx.Path()) == "/park" {
			g.hold()
		}
		ctx.SetStatusCode(fasthttp.StatusNoContent)
	})
	c := open(t, n.addr)
	req := post("/park", "")
	defer fasthttp.ReleaseRequest(req)
	done := make(chan error, 1)
	go func() {
		var resp fasthttp.Response
		done <- c.Do(req, &resp, time.Now().Add(time.Minute), 1<<20)
	}()
	<-g.arrived
	// Ten keep-alives heard is five times the silence that ends a link.
	for range 10 {
		before := c.heard.Load()
		eventually(t, func() bool { return c.heard.Load() != before }, "no keep-alive came")
	}
	require.True(t, c.Alive())
	g.open()
	require.NoError(t, <-done)
}

// A request whose deadline passed is refused as the pool refuses it
// (fasthttp.ErrTimeout) and never written: the node's first request is
// the next one.
func TestAPassedDeadlineIsNotSent(t *testing.T) {
	f := serveFake(t, fakeConfig{})
	c := open(t, f.addr)
	late := post("/late", "x")
	defer fasthttp.ReleaseRequest(late)
	var resp fasthttp.Response
	require.ErrorIs(t, c.Do(late, &resp, time.Now().Add(-time.Millisecond), 1<<20), fasthttp.ErrTimeout)
	next := post("/next", "x")
	defer fasthttp.ReleaseRequest(next)
	require.NoError(t, c.Do(next, &resp, time.Now().Add(5*time.Second), 1<<20))
	require.Equal(t, "/next", <-f.paths)
}

// The node serves at most MaxInFlight requests on all its links at
// once, however many links its callers open; the rest wait for slots.
func TestRequestsInFlightAreBoundedAcrossLinks(t *testing.T) {
	g := newGate(t)
	n := serveNode(t, ServerConfig{MaxRequests: 10, MaxInFlight: 3}, func(*fasthttp.RequestCtx) { g.hold() })
	var links []*bufio.Reader
	for range 2 {
		conn, br := rawLink(t, n.addr)
		require.NoError(t, conn.SetReadDeadline(time.Now().Add(time.Minute)))
		links = append(links, br)
		sendRequests(t, conn, 2)
	}
	eventually(t, func() bool { return g.reached.Load() >= 3 }, "the node did not serve up to its bound")
	time.Sleep(50 * time.Millisecond) // a fourth would show up by now; the assertion below is the bound
	require.EqualValues(t, 3, g.reached.Load())
	g.open()
	eventually(t, func() bool { return g.reached.Load() == 4 }, "the rest was not served once slots freed")
	for _, br := range links {
		for range 2 {
			skipAnswer(t, br)
		}
	}
}

// The node opens at most MaxLinks links at once: past it the upgrade is
// refused, and once a link closes another opens.
func TestLinksAreBounded(t *testing.T) {
	n := serveNode(t, ServerConfig{MaxLinks: 2}, echo)
	a := open(t, n.addr)
	open(t, n.addr)
	// A link counts once the node serves it, just after its 101.
	eventually(t, func() bool { return n.links.linksOpen() == 2 }, "the node does not serve the two links")
	_, err := dial(t, n.addr)
	var refused *UpgradeError
	require.ErrorAs(t, err, &refused, "a third link")
	a.Close()
	eventually(t, func() bool {
		c, err := dial(t, n.addr)
		if err != nil {
			return false
		}
		c.Close()
		return true
	}, "no link opened after one closed")
}

package shardlink

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/valyala/fasthttp"
)

// fakeNode is a node on a real socket that answers the upgrade with 101
// (and a keep-alive interval of keepAliveMs, if not empty) and then
// leaves the link to speak: what a frozen node, or one behind a path
// that drops packets, looks like to its caller.
func fakeNode(t *testing.T, keepAliveMs string, speak func(conn net.Conn, br *bufio.Reader)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var wg sync.WaitGroup
	quit := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		defer conn.Close()
		br := bufio.NewReader(conn)
		var h fasthttp.RequestHeader
		if h.Read(br) != nil {
			return
		}
		answer := "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: " + Protocol +
			"\r\nJobbie-Link-Max-Requests: 100\r\nJobbie-Link-Max-Body: 65536\r\nJobbie-Link-Max-Head: 8192\r\n"
		if keepAliveMs != "" {
			answer += "Jobbie-Link-Keep-Alive: " + keepAliveMs + "\r\n"
		}
		if _, err := conn.Write([]byte(answer + "\r\n")); err != nil {
			return
		}
		speak(conn, br)
		<-quit // the connection stays up, silent, until the test ends
	}()
	t.Cleanup(func() { close(quit); _ = ln.Close(); wg.Wait() })
	return ln.Addr().String()
}

// A node that stops answering while TCP stays up loses its link once it
// has sent nothing for three keep-alive intervals with a request
// waiting: the request written fails as lost (as on a link that dies),
// and the link takes no more (they go the pool's way).
func TestASilentNodeLosesItsLink(t *testing.T) {
	addr := fakeNode(t, "50", func(net.Conn, *bufio.Reader) {})
	c := open(t, addr)
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
	addr := fakeNode(t, "", func(net.Conn, *bufio.Reader) {})
	c := open(t, addr)
	req := post("/write", "x")
	defer fasthttp.ReleaseRequest(req)
	var resp fasthttp.Response
	require.ErrorIs(t, c.Do(req, &resp, time.Now().Add(300*time.Millisecond), 1<<20), fasthttp.ErrTimeout)
	require.True(t, c.Alive())
}

// A request parked at the node far longer than three keep-alive
// intervals keeps its link: the node's keep-alives are heard.
func TestAParkedRequestKeepsItsLink(t *testing.T) {
	got := make(chan struct{})
	release := make(chan struct{})
	n := serveNode(t, ServerConfig{KeepAlive: 20 * time.Millisecond}, func(ctx *fasthttp.RequestCtx) {
		if string(ctx.Path()) == "/park" {
			close(got)
			<-release
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
	<-got
	// Ten keep-alives heard is five times the silence that ends a link.
	for range 10 {
		before := c.heard.Load()
		eventually(t, func() bool { return c.heard.Load() != before }, "no keep-alive came")
	}
	require.True(t, c.Alive())
	close(release)
	require.NoError(t, <-done)
}

// A request whose deadline passed is refused as the pool refuses it
// (fasthttp.ErrTimeout) and never written: the node's first request is
// the next one.
func TestAPassedDeadlineIsNotSent(t *testing.T) {
	first := make(chan string, 1)
	addr := fakeNode(t, "", func(conn net.Conn, br *bufio.Reader) {
		n, id, _, err := peekHeader(br)
		if err != nil {
			return
		}
		p := make([]byte, n)
		if _, err := io.ReadFull(br, p); err != nil {
			return
		}
		var req fasthttp.Request
		if req.Read(bufio.NewReader(bytes.NewReader(p))) != nil {
			return
		}
		first <- string(req.URI().Path())
		ans := []byte("HTTP/1.1 204 No Content\r\n\r\n")
		frame := make([]byte, headerSize, headerSize+len(ans))
		binary.BigEndian.PutUint32(frame, uint32(len(ans)))
		binary.BigEndian.PutUint64(frame[4:], id)
		frame[12] = byte(kindAnswer)
		_, _ = conn.Write(append(frame, ans...))
	})
	c := open(t, addr)
	late := post("/late", "x")
	defer fasthttp.ReleaseRequest(late)
	var resp fasthttp.Response
	require.ErrorIs(t, c.Do(late, &resp, time.Now().Add(-time.Millisecond), 1<<20), fasthttp.ErrTimeout)
	next := post("/next", "x")
	defer fasthttp.ReleaseRequest(next)
	require.NoError(t, c.Do(next, &resp, time.Now().Add(5*time.Second), 1<<20))
	require.Equal(t, "/next", <-first)
}

// The node serves at most MaxInFlight requests on all its links at
// once, however many links its callers open; the rest wait for slots.
func TestRequestsInFlightAreBoundedAcrossLinks(t *testing.T) {
	var serving atomic.Int32
	release := make(chan struct{})
	n := serveNode(t, ServerConfig{MaxRequests: 10, MaxInFlight: 3}, func(ctx *fasthttp.RequestCtx) {
		serving.Add(1)
		<-release
	})
	var freed sync.Once
	free := func() { freed.Do(func() { close(release) }) }
	t.Cleanup(free) // before the node's cleanup: its handlers end
	var links []*bufio.Reader
	for range 2 {
		conn, br := rawLink(t, n.addr)
		require.NoError(t, conn.SetReadDeadline(time.Now().Add(time.Minute)))
		links = append(links, br)
		for id := range uint64(2) {
			_, err := conn.Write(requestFrame(t, id+1, "x"))
			require.NoError(t, err)
		}
	}
	eventually(t, func() bool { return serving.Load() >= 3 }, "the node did not serve up to its bound")
	time.Sleep(50 * time.Millisecond) // a fourth would show up by now; the assertion below is the bound
	require.EqualValues(t, 3, serving.Load())
	free()
	eventually(t, func() bool { return serving.Load() == 4 }, "the rest was not served once slots freed")
	for _, br := range links {
		for range 2 {
			n, _, k, err := peekHeader(br)
			require.NoError(t, err)
			require.Equal(t, kindAnswer, k)
			_, err = br.Discard(n)
			require.NoError(t, err)
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
	eventually(t, func() bool {
		n.links.mu.Lock()
		defer n.links.mu.Unlock()
		return len(n.links.links) == 2
	}, "the node does not serve the two links")
	conn, err := net.Dial("tcp", n.addr)
	require.NoError(t, err)
	_, err = Open(conn, "node", time.Now().Add(5*time.Second), Options{})
	var refused *UpgradeError
	require.ErrorAs(t, err, &refused, "a third link")
	a.Close()
	eventually(t, func() bool {
		conn, err := net.Dial("tcp", n.addr)
		require.NoError(t, err)
		c, err := Open(conn, "node", time.Now().Add(5*time.Second), Options{})
		if err != nil {
			return false
		}
		c.Close()
		return true
	}, "no link opened after one closed")
}

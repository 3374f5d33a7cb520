package shardclient

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/valyala/fasthttp"

	"github.com/jobbie/jobbie/internal/pki"
	"github.com/jobbie/jobbie/internal/shardlink"
)

// Once a request got an answer on the pool, the node's link is dialed and
// the requests after go on it; Do's rules do not change.
func TestRequestsGoOnTheLink(t *testing.T) {
	t.Parallel()
	f := serveLinks(t, linkConfig{})
	c := newClient(t, time.Second)
	rt, err := c.Route("s1", f.addr, nil)
	require.NoError(t, err)
	resp, err := call(t, c, rt, fasthttp.MethodPost)
	require.NoError(t, err)
	require.Equal(t, fasthttp.StatusCreated, resp.StatusCode())
	require.EqualValues(t, 1, f.pooled.Load(), "the first request goes on the pool")
	waitLinked(t, rt.Current())
	for range 5 {
		resp, err := call(t, c, rt, fasthttp.MethodPost)
		require.NoError(t, err)
		require.Equal(t, fasthttp.StatusCreated, resp.StatusCode())
	}
	require.EqualValues(t, 5, f.linked.Load())
	require.EqualValues(t, 1, f.pooled.Load())
}

// A node that does not serve links (an older one: 404) gets its requests
// on the pool, and is not asked again at every request.
func TestANodeWithoutLinksUsesThePool(t *testing.T) {
	t.Parallel()
	f := serve(t, ok)
	c := newClient(t, time.Second)
	rt, err := c.Route("s1", f.addr, nil)
	require.NoError(t, err)
	n := rt.Current()
	for range 20 {
		resp, err := call(t, c, rt, fasthttp.MethodPost)
		require.NoError(t, err)
		require.Equal(t, fasthttp.StatusCreated, resp.StatusCode())
	}
	// The one dial the first answer started has been refused by now.
	deadline := time.Now().Add(10 * time.Second)
	for {
		n.link.mu.Lock()
		refused := !n.link.dialing && !n.link.retryAt.IsZero()
		wait := time.Until(n.link.retryAt)
		n.link.mu.Unlock()
		if refused {
			require.Greater(t, wait, linkRefusedWait/2, "a refused upgrade is not tried again soon")
			break
		}
		require.True(t, time.Now().Before(deadline), "the link was never tried")
		time.Sleep(5 * time.Millisecond)
	}
	require.False(t, n.Linked())
	require.EqualValues(t, 20, f.hits.Load(), "every request was served, on the pool")
}

// A write whose link ends before the answer may have been applied: it is
// a failure with Sent, and never sent again. A read is tried again.
func TestALinkLostMidRequestIsSent(t *testing.T) {
	t.Parallel()
	f := serveLinks(t, linkConfig{Hold: "/hang"})
	c := newClient(t, 2*time.Second)
	rt := linkedRoute(t, c, f.addr)

	errc := make(chan error, 1)
	go func() { errc <- postTo(c, rt, "/hang", time.Now().Add(10*time.Second)) }()
	<-f.held
	f.stop() // the node's links end, as when it crashes
	var fl *Failure
	require.ErrorAs(t, <-errc, &fl)
	require.True(t, fl.Sent, "written on the link: it may have been applied")
	require.False(t, fl.TimedOut())
	require.EqualValues(t, 1, f.linked.Load()+f.pooled.Load()-1, "the write was not sent again")
}

// A deadline that passes on the link is the pool's timeout.
func TestALinkTimeoutIsATimeout(t *testing.T) {
	t.Parallel()
	f := serveLinks(t, linkConfig{Hold: "/slow"})
	c := newClient(t, time.Second)
	rt := linkedRoute(t, c, f.addr)
	err := postTo(c, rt, "/slow", time.Now().Add(100*time.Millisecond))
	var fl *Failure
	require.ErrorAs(t, err, &fl)
	require.True(t, fl.TimedOut(), "%v", err)
	require.EqualValues(t, 1, f.linked.Load())
}

// A link that ends after a write was sent on it, for whatever reason (here
// a record the TLS layer refuses, which on a connection being opened would
// mean "nothing was sent"), fails the write with Sent true: it is never
// sent again on the pool.
func TestALinkLostToATLSErrorIsSent(t *testing.T) {
	t.Parallel()
	ca, err := pki.NewCA("test ca")
	require.NoError(t, err)
	node := creds(t, ca, pki.Identity{Role: pki.RoleShard, Shard: "s1", Node: "n1"})
	gw := creds(t, ca, pki.Identity{Role: pki.RoleGateway, Node: "g1"})
	var writes atomic.Int32
	handle := func(f *linkNode, ctx *fasthttp.RequestCtx) {
		if string(ctx.Path()) == "/write" {
			writes.Add(1)
			if shardlink.Over(ctx.Conn()) {
				// An oversized record's header, under the TLS layer.
				_, _ = f.conn(ctx).Write([]byte{23, 3, 3, 0xff, 0xff})
			}
		}
		ctx.SetStatusCode(fasthttp.StatusCreated)
	}
	f := serveLinks(t, linkConfig{TLS: node.Server(pki.Roles(pki.RoleGateway)), Handle: handle})

	c := New(Config{TLS: gw, RetryTimeout: 2 * time.Second})
	t.Cleanup(c.Close)
	rt := linkedRoute(t, c, f.addr)
	err = postTo(c, rt, "/write", time.Now().Add(10*time.Second))
	var fl *Failure
	require.ErrorAs(t, err, &fl, "the write's link ended: it has no answer (served %d times)", writes.Load())
	require.True(t, fl.Sent, "written on the link: it may have been applied: %v", fl.Err)
	require.EqualValues(t, 1, writes.Load(), "the write was not sent again")
}

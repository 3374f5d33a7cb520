package shardclient

import (
	"context"
	"crypto/tls"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/valyala/fasthttp"

	"github.com/jobbie/jobbie/internal/pki"
	"github.com/jobbie/jobbie/internal/shardlink"
)

// linkNode is a real HTTP server on loopback that serves links with
// handle, as a shard node does, and counts the requests that came on one.
type linkNode struct {
	addr   string
	links  *shardlink.Server
	linked atomic.Int32 // requests served on a link
	pooled atomic.Int32 // requests served on a connection of their own
}

func serveLinks(t *testing.T, handle fasthttp.RequestHandler) *linkNode {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	f := &linkNode{addr: ln.Addr().String()}
	count := func(ctx *fasthttp.RequestCtx) {
		if shardlink.Over(ctx.Conn()) {
			f.linked.Add(1)
		} else {
			f.pooled.Add(1)
		}
		handle(ctx)
	}
	f.links = shardlink.NewServer(shardlink.ServerConfig{Handler: count, MaxBody: 1 << 20, MaxHead: 8 << 10})
	srv := &fasthttp.Server{Handler: func(ctx *fasthttp.RequestCtx) {
		if string(ctx.Path()) == shardlink.Path {
			if err := f.links.Upgrade(ctx); err != nil {
				ctx.Error(err.Error(), fasthttp.StatusBadRequest)
			}
			return
		}
		count(ctx)
	}}
	done := make(chan struct{})
	go func() { _ = srv.Serve(ln); close(done) }()
	t.Cleanup(func() {
		_ = srv.Shutdown()
		<-done
		f.stop()
	})
	return f
}

// stop ends the node's links at once, as a node's crash does.
func (f *linkNode) stop() {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	f.links.Shutdown(ctx)
}

func waitLinked(t *testing.T, n *Node) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !n.Linked() {
		require.True(t, time.Now().Before(deadline), "the node's link never came up")
		time.Sleep(5 * time.Millisecond)
	}
}

// Once a request got an answer on the pool, the node's link is dialed and
// the requests after go on it; Do's rules do not change.
func TestRequestsGoOnTheLink(t *testing.T) {
	t.Parallel()
	f := serveLinks(t, func(ctx *fasthttp.RequestCtx) { ctx.SetStatusCode(fasthttp.StatusCreated) })
	c := New(Config{RetryTimeout: time.Second})
	t.Cleanup(c.Close)
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
	f := serve(t, func(ctx *fasthttp.RequestCtx) { ctx.SetStatusCode(fasthttp.StatusCreated) })
	c := New(Config{RetryTimeout: time.Second})
	t.Cleanup(c.Close)
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
	got := make(chan struct{}, 1)
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	var f *linkNode
	f = serveLinks(t, func(ctx *fasthttp.RequestCtx) {
		if string(ctx.Path()) == "/hang" {
			got <- struct{}{}
			<-release
		}
		ctx.SetStatusCode(fasthttp.StatusCreated)
	})
	c := New(Config{RetryTimeout: 2 * time.Second})
	t.Cleanup(c.Close)
	rt, err := c.Route("s1", f.addr, nil)
	require.NoError(t, err)
	_, err = call(t, c, rt, fasthttp.MethodPost)
	require.NoError(t, err)
	waitLinked(t, rt.Current())

	req := fasthttp.AcquireRequest()
	resp := fasthttp.AcquireResponse()
	t.Cleanup(func() { fasthttp.ReleaseRequest(req); fasthttp.ReleaseResponse(resp) })
	req.Header.SetMethod(fasthttp.MethodPost)
	req.SetRequestURI("/hang")
	errc := make(chan error, 1)
	go func() { errc <- c.Do(rt, req, resp, time.Now().Add(10*time.Second)) }()
	<-got
	f.stop() // the node's links end, as when it crashes
	err = <-errc
	var fl *Failure
	require.ErrorAs(t, err, &fl)
	require.True(t, fl.Sent, "written on the link: it may have been applied")
	require.False(t, fl.TimedOut())
	require.EqualValues(t, 1, f.linked.Load()+f.pooled.Load()-1, "the write was not sent again")
}

// A deadline that passes on the link is the pool's timeout.
func TestALinkTimeoutIsATimeout(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	f := serveLinks(t, func(ctx *fasthttp.RequestCtx) {
		if string(ctx.Path()) == "/slow" {
			<-release
		}
		ctx.SetStatusCode(fasthttp.StatusCreated)
	})
	c := New(Config{RetryTimeout: time.Second})
	t.Cleanup(c.Close)
	rt, err := c.Route("s1", f.addr, nil)
	require.NoError(t, err)
	_, err = call(t, c, rt, fasthttp.MethodPost)
	require.NoError(t, err)
	waitLinked(t, rt.Current())
	req := fasthttp.AcquireRequest()
	resp := fasthttp.AcquireResponse()
	t.Cleanup(func() { fasthttp.ReleaseRequest(req); fasthttp.ReleaseResponse(resp) })
	req.Header.SetMethod(fasthttp.MethodPost)
	req.SetRequestURI("/slow")
	err = c.Do(rt, req, resp, time.Now().Add(100*time.Millisecond))
	var fl *Failure
	require.ErrorAs(t, err, &fl)
	require.True(t, fl.TimedOut(), "%v", err)
	require.EqualValues(t, 1, f.linked.Load())
}

// rawConns is a listener that keeps each accepted connection by its
// peer's address, so a test can write under the TLS layer.
type rawConns struct {
	net.Listener
	mu     sync.Mutex
	byPeer map[string]net.Conn
}

func (l *rawConns) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.mu.Lock()
		l.byPeer[c.RemoteAddr().String()] = c
		l.mu.Unlock()
	}
	return c, err
}

func (l *rawConns) of(addr string) net.Conn {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.byPeer[addr]
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
	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	raw := &rawConns{Listener: tcp, byPeer: map[string]net.Conn{}}
	var writes atomic.Int32
	handle := func(ctx *fasthttp.RequestCtx) {
		if string(ctx.Path()) == "/write" {
			writes.Add(1)
			if shardlink.Over(ctx.Conn()) {
				// An oversized record's header, under the TLS layer.
				_, _ = raw.of(ctx.RemoteAddr().String()).Write([]byte{23, 3, 3, 0xff, 0xff})
			}
		}
		ctx.SetStatusCode(fasthttp.StatusCreated)
	}
	links := shardlink.NewServer(shardlink.ServerConfig{Handler: handle, MaxBody: 1 << 20, MaxHead: 8 << 10})
	srv := &fasthttp.Server{Handler: func(ctx *fasthttp.RequestCtx) {
		if string(ctx.Path()) == shardlink.Path {
			if err := links.Upgrade(ctx); err != nil {
				ctx.Error(err.Error(), fasthttp.StatusBadRequest)
			}
			return
		}
		handle(ctx)
	}}
	done := make(chan struct{})
	go func() { _ = srv.Serve(tls.NewListener(raw, node.Server(pki.Roles(pki.RoleGateway)))); close(done) }()
	t.Cleanup(func() {
		_ = srv.Shutdown()
		<-done
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		links.Shutdown(ctx)
	})

	c := New(Config{TLS: gw, RetryTimeout: 2 * time.Second})
	t.Cleanup(c.Close)
	rt, err := c.Route("s1", tcp.Addr().String(), nil)
	require.NoError(t, err)
	_, err = call(t, c, rt, fasthttp.MethodPost)
	require.NoError(t, err)
	waitLinked(t, rt.Current())

	req := fasthttp.AcquireRequest()
	resp := fasthttp.AcquireResponse()
	t.Cleanup(func() { fasthttp.ReleaseRequest(req); fasthttp.ReleaseResponse(resp) })
	req.Header.SetMethod(fasthttp.MethodPost)
	req.SetRequestURI("/write")
	err = c.Do(rt, req, resp, time.Now().Add(10*time.Second))
	var fl *Failure
	require.ErrorAs(t, err, &fl, "the write's link ended: it has no answer (served %d times)", writes.Load())
	require.True(t, fl.Sent, "written on the link: it may have been applied: %v", fl.Err)
	require.EqualValues(t, 1, writes.Load(), "the write was not sent again")
}

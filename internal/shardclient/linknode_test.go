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

	"github.com/jobbie/jobbie/internal/shardlink"
)

// linkNode is a real HTTP server on loopback that serves links as a
// shard node does (shardlink.Server), with the knobs the tests of links
// turn: it counts the requests served on a link and on a connection of
// their own, holds the requests to one path until the test ends, keeps
// each connection it accepted so that a test can freeze it with TCP up
// or write under its TLS layer, and can end its links at once (stop).
type linkNode struct {
	addr   string
	links  *shardlink.Server
	linked atomic.Int32  // requests served on a link
	pooled atomic.Int32  // requests served on a connection of their own
	held   chan struct{} // a request to linkConfig.Hold arrived

	mu     sync.Mutex
	byPeer map[string]*freezable // every connection accepted, by its peer's address
	asked  []*freezable          // the connections that asked for a link, in order
}

// linkConfig is what a test sets of its linkNode; the zero value's node
// answers every request with 201.
type linkConfig struct {
	// Handle answers each request in place of the 201, once counted (and
	// held).
	Handle func(f *linkNode, ctx *fasthttp.RequestCtx)
	// Hold is a path whose requests wait until the test ends.
	Hold string
	// TLS serves the node over TLS (under which its connections are kept).
	TLS *tls.Config
	// KeepAlive is the links' keep-alive interval (0: shardlink's).
	KeepAlive time.Duration
}

func serveLinks(t *testing.T, cfg linkConfig) *linkNode {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	f := &linkNode{addr: ln.Addr().String(), held: make(chan struct{}, 1), byPeer: map[string]*freezable{}}
	ended := t.Context().Done() // before the cleanup below: held requests and frozen writes end first
	handle := func(ctx *fasthttp.RequestCtx) {
		if shardlink.Over(ctx.Conn()) {
			f.linked.Add(1)
		} else {
			f.pooled.Add(1)
		}
		if cfg.Hold != "" && string(ctx.Path()) == cfg.Hold {
			select {
			case f.held <- struct{}{}:
			case <-ended:
			}
			<-ended
		}
		if cfg.Handle != nil {
			cfg.Handle(f, ctx)
			return
		}
		ctx.SetStatusCode(fasthttp.StatusCreated)
	}
	f.links = shardlink.NewServer(shardlink.ServerConfig{Handler: handle, MaxBody: 1 << 20, MaxHead: 8 << 10,
		KeepAlive: cfg.KeepAlive})
	srv := &fasthttp.Server{Handler: func(ctx *fasthttp.RequestCtx) {
		if string(ctx.Path()) == shardlink.Path {
			f.mu.Lock()
			f.asked = append(f.asked, f.byPeer[ctx.RemoteAddr().String()])
			f.mu.Unlock()
			if err := f.links.Upgrade(ctx); err != nil {
				ctx.Error(err.Error(), fasthttp.StatusBadRequest)
			}
			return
		}
		handle(ctx)
	}}
	var l net.Listener = keepConns{Listener: ln, f: f, thawed: ended}
	if cfg.TLS != nil {
		l = tls.NewListener(l, cfg.TLS)
	}
	done := make(chan struct{})
	go func() { _ = srv.Serve(l); close(done) }()
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

// conn is the connection a request came on, under any TLS layer.
func (f *linkNode) conn(ctx *fasthttp.RequestCtx) net.Conn {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.byPeer[ctx.RemoteAddr().String()]
}

// linkConns are the connections that asked for a link, in order.
func (f *linkNode) linkConns() []*freezable {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]*freezable(nil), f.asked...)
}

// keepConns is a listener that keeps each connection it accepts in its
// node, freezable.
type keepConns struct {
	net.Listener
	f      *linkNode
	thawed <-chan struct{}
}

func (l keepConns) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	fc := &freezable{Conn: c, frozen: make(chan struct{}), thawed: l.thawed}
	l.f.mu.Lock()
	l.f.byPeer[c.RemoteAddr().String()] = fc
	l.f.mu.Unlock()
	return fc, nil
}

// freezable is a node's connection that can stop writing, with TCP up:
// a frozen node, or a path that drops packets without a reset.
type freezable struct {
	net.Conn
	frozen chan struct{} // closed: writes block until thawed
	thawed <-chan struct{}
}

func (c *freezable) freeze() { close(c.frozen) }

func (c *freezable) Write(p []byte) (int, error) {
	select {
	case <-c.frozen:
		<-c.thawed
		return 0, net.ErrClosed
	default:
		return c.Conn.Write(p)
	}
}

func waitLinked(t *testing.T, n *Node) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !n.Linked() {
		require.True(t, time.Now().Before(deadline), "the node's link never came up")
		time.Sleep(5 * time.Millisecond)
	}
}

// linkedRoute is a route of c to shard s1 at addr whose node's link is
// up: a first request got its answer on the pool, and the link was
// dialed.
func linkedRoute(t *testing.T, c *Client, addr string) *Route {
	t.Helper()
	rt, err := c.Route("s1", addr, nil)
	require.NoError(t, err)
	_, err = call(t, c, rt, fasthttp.MethodPost)
	require.NoError(t, err)
	waitLinked(t, rt.Current())
	return rt
}

// postTo sends a POST to path on rt by deadline.
func postTo(c *Client, rt *Route, path string, deadline time.Time) error {
	req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.Header.SetMethod(fasthttp.MethodPost)
	req.SetRequestURI(path)
	return c.Do(rt, req, resp, deadline)
}

package shardclient

import (
	"context"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/valyala/fasthttp"

	"github.com/jobbie/jobbie/internal/shardlink"
)

// freezable is a node's connection that can stop writing, with TCP up:
// a frozen node, or a path that drops packets without a reset.
type freezable struct {
	net.Conn
	frozen chan struct{} // closed: writes block until thawed
	thawed chan struct{}
}

func (c *freezable) Write(p []byte) (int, error) {
	select {
	case <-c.frozen:
		<-c.thawed
		return 0, net.ErrClosed
	default:
		return c.Conn.Write(p)
	}
}

type freezeListener struct {
	net.Listener
	thawed chan struct{}
}

func (l freezeListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &freezable{Conn: c, frozen: make(chan struct{}), thawed: l.thawed}, nil
}

// A link whose node goes silent while a request waits ends: the request
// fails as sent (it may have been applied), and the next requests go on
// the pool until a new link is up.
func TestASilentLinkIsReplaced(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	thawed := make(chan struct{})
	var linked, pooled atomic.Int32
	handle := func(ctx *fasthttp.RequestCtx) {
		if shardlink.Over(ctx.Conn()) {
			linked.Add(1)
		} else {
			pooled.Add(1)
		}
		ctx.SetStatusCode(fasthttp.StatusCreated)
	}
	links := shardlink.NewServer(shardlink.ServerConfig{Handler: handle, MaxBody: 1 << 20, MaxHead: 8 << 10,
		KeepAlive: 20 * time.Millisecond})
	var mu sync.Mutex
	var linkConns []*freezable
	srv := &fasthttp.Server{Handler: func(ctx *fasthttp.RequestCtx) {
		if string(ctx.Path()) == shardlink.Path {
			mu.Lock()
			linkConns = append(linkConns, ctx.Conn().(*freezable))
			mu.Unlock()
			if err := links.Upgrade(ctx); err != nil {
				ctx.Error(err.Error(), fasthttp.StatusBadRequest)
			}
			return
		}
		handle(ctx)
	}}
	done := make(chan struct{})
	go func() { _ = srv.Serve(freezeListener{Listener: ln, thawed: thawed}); close(done) }()
	t.Cleanup(func() {
		close(thawed)
		_ = srv.Shutdown()
		<-done
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		links.Shutdown(ctx)
	})

	c := New(Config{RetryTimeout: time.Second})
	t.Cleanup(c.Close)
	rt, err := c.Route("s1", ln.Addr().String(), nil)
	require.NoError(t, err)
	_, err = call(t, c, rt, fasthttp.MethodPost)
	require.NoError(t, err)
	n := rt.Current()
	waitLinked(t, n)
	mu.Lock()
	require.Len(t, linkConns, 1)
	close(linkConns[0].frozen)
	mu.Unlock()

	_, err = call(t, c, rt, fasthttp.MethodPost)
	var fl *Failure
	require.ErrorAs(t, err, &fl)
	require.True(t, fl.Sent, "written on the link: it may have been applied")
	require.False(t, fl.TimedOut(), "the link ended before the request's deadline")
	require.False(t, n.Linked())

	before := pooled.Load()
	_, err = call(t, c, rt, fasthttp.MethodPost)
	require.NoError(t, err)
	if !n.Linked() { // a new link may already be up; otherwise it went on the pool
		require.Greater(t, pooled.Load(), before)
	}
	waitLinked(t, n)
	before = linked.Load()
	_, err = call(t, c, rt, fasthttp.MethodPost)
	require.NoError(t, err)
	require.Equal(t, before+1, linked.Load(), "the new link takes requests")
}

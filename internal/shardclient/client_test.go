package shardclient

import (
	"bufio"
	"errors"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/valyala/fasthttp"

	"github.com/jobbie/jobbie/internal/shardlink"
	"github.com/jobbie/jobbie/wire"
)

// fakeNode is a real HTTP server on loopback that counts the requests it
// got and answers with handle. It serves no links (an older node's 404).
type fakeNode struct {
	addr string
	hits atomic.Int32
}

func serve(t *testing.T, handle func(ctx *fasthttp.RequestCtx)) *fakeNode {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	f := &fakeNode{addr: ln.Addr().String()}
	srv := &fasthttp.Server{Handler: func(ctx *fasthttp.RequestCtx) {
		if noLink(ctx) {
			return
		}
		f.hits.Add(1)
		handle(ctx)
	}}
	done := make(chan struct{})
	go func() { _ = srv.Serve(ln); close(done) }()
	t.Cleanup(func() { _ = srv.Shutdown(); <-done })
	return f
}

// noLink answers a link's upgrade as a node that has no links does.
func noLink(ctx *fasthttp.RequestCtx) bool {
	if string(ctx.Path()) != shardlink.Path {
		return false
	}
	ctx.SetStatusCode(fasthttp.StatusNotFound)
	return true
}

// hangUp is a node that reads a request and closes the connection without
// answering: the request reached it, and may have been applied.
func hangUp(t *testing.T) *fakeNode {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	f := &fakeNode{addr: ln.Addr().String()}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			if _, err := bufio.NewReader(c).ReadString('\n'); err == nil {
				f.hits.Add(1)
			}
			_ = c.Close()
		}
	}()
	t.Cleanup(func() { _ = ln.Close(); <-done })
	return f
}

// deadAddr is an address nobody listens on: dials are refused.
func deadAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	return addr
}

func newClient(t *testing.T, retry time.Duration) *Client {
	c := New(Config{RetryTimeout: retry})
	t.Cleanup(c.Close)
	return c
}

func call(t *testing.T, c *Client, rt *Route, method string) (*fasthttp.Response, error) {
	req := fasthttp.AcquireRequest()
	defer fasthttp.ReleaseRequest(req)
	req.Header.SetMethod(method)
	req.SetRequestURI("/api/v1/enqueue")
	resp := new(fasthttp.Response)
	return resp, c.Do(rt, req, resp, time.Now().Add(5*time.Second))
}

func ok(ctx *fasthttp.RequestCtx) { ctx.SetStatusCode(fasthttp.StatusCreated) }

// A follower that names the leader sends the request there at once, and
// the route then goes straight to the leader.
func TestDoFollowsTheNamedLeader(t *testing.T) {
	t.Parallel()
	leader := serve(t, ok)
	follower := serve(t, func(ctx *fasthttp.RequestCtx) {
		ctx.Response.Header.Set(wire.LeaderHeader, leader.addr)
		ctx.SetStatusCode(fasthttp.StatusMisdirectedRequest)
	})
	c := newClient(t, time.Second)
	rt, err := c.Route("s1", follower.addr, nil)
	require.NoError(t, err)

	resp, err := call(t, c, rt, fasthttp.MethodPost)
	require.NoError(t, err)
	require.Equal(t, fasthttp.StatusCreated, resp.StatusCode())
	require.Equal(t, leader.addr, rt.Current().Host(), "the route follows the leader")
	_, err = call(t, c, rt, fasthttp.MethodPost)
	require.NoError(t, err)
	require.EqualValues(t, 1, follower.hits.Load(), "the second request goes straight to the leader")
	require.EqualValues(t, 2, leader.hits.Load())
}

// A shard with no leader is asked again until the budget runs out; then
// its own 503 is the answer, with Retry-After.
func TestDoGivesBackNoLeaderAfterTheBudget(t *testing.T) {
	t.Parallel()
	node := serve(t, func(ctx *fasthttp.RequestCtx) {
		ctx.SetStatusCode(fasthttp.StatusServiceUnavailable)
		ctx.SetBodyString(`{"error":{"code":"no_leader","message":"electing"}}`)
	})
	c := newClient(t, 300*time.Millisecond)
	rt, err := c.Route("s1", node.addr, nil)
	require.NoError(t, err)

	start := time.Now()
	resp, err := call(t, c, rt, fasthttp.MethodPost)
	require.NoError(t, err)
	require.Equal(t, fasthttp.StatusServiceUnavailable, resp.StatusCode())
	require.Equal(t, "1", string(resp.Header.Peek(fasthttp.HeaderRetryAfter)))
	require.GreaterOrEqual(t, time.Since(start), 300*time.Millisecond, "it waited out the budget")
	require.Greater(t, node.hits.Load(), int32(2), "it asked again meanwhile")

	// Any other 503 is the shard's answer at once: only no_leader says
	// nothing was applied.
	busy := serve(t, func(ctx *fasthttp.RequestCtx) { ctx.SetStatusCode(fasthttp.StatusServiceUnavailable) })
	rt2, err := c.Route("s2", busy.addr, nil)
	require.NoError(t, err)
	resp, err = call(t, c, rt2, fasthttp.MethodPost)
	require.NoError(t, err)
	require.Equal(t, fasthttp.StatusServiceUnavailable, resp.StatusCode())
	require.EqualValues(t, 1, busy.hits.Load())
}

// A write whose connection could not be made certainly was not applied:
// it goes to the next member.
func TestDoRetriesAWriteThatWasNotSent(t *testing.T) {
	t.Parallel()
	live := serve(t, ok)
	c := newClient(t, 2*time.Second)
	rt, err := c.Route("s1", deadAddr(t), []string{live.addr})
	require.NoError(t, err)
	resp, err := call(t, c, rt, fasthttp.MethodPost)
	require.NoError(t, err)
	require.Equal(t, fasthttp.StatusCreated, resp.StatusCode())
	require.Equal(t, live.addr, rt.Current().Host())

	// With no member answering, the failure says the request never left.
	rt2, err := c.Route("s2", deadAddr(t), nil)
	require.NoError(t, err)
	_, err = call(t, c, rt2, fasthttp.MethodPost)
	var f *Failure
	require.ErrorAs(t, err, &f)
	require.False(t, f.Sent)
	require.False(t, Sent(f.Err))
}

// A write that reached a node and got no answer may have been applied: it
// is not sent again, and the failure says so. A read is tried again.
func TestDoNeverResendsAWriteThatMayHaveLanded(t *testing.T) {
	t.Parallel()
	lost := hangUp(t)
	live := serve(t, ok)
	c := newClient(t, 2*time.Second)
	rt, err := c.Route("s1", lost.addr, []string{live.addr})
	require.NoError(t, err)

	_, err = call(t, c, rt, fasthttp.MethodPost)
	var f *Failure
	require.ErrorAs(t, err, &f)
	require.True(t, f.Sent, "the node read the request")
	require.Equal(t, lost.addr, f.Node)
	require.EqualValues(t, 1, lost.hits.Load(), "sent once")
	require.Zero(t, live.hits.Load(), "and never again")
	require.False(t, errors.Is(err, ErrNoLeader))

	resp, err := call(t, c, rt, fasthttp.MethodGet)
	require.NoError(t, err, "a read moves on to the next member")
	require.Equal(t, fasthttp.StatusCreated, resp.StatusCode())
	require.EqualValues(t, 1, live.hits.Load())
}

package shardclient

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/stretchr/testify/require"
	"github.com/valyala/fasthttp"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/pki"
	"github.com/jobbie/jobbie/internal/pki/pkitest"
	"github.com/jobbie/jobbie/internal/tunnel"
	"github.com/jobbie/jobbie/wire"
)

// tunnelWait bounds every wait on a signal: generous for a loaded box.
const tunnelWait = 30 * time.Second

var quietLog = slog.New(slog.NewTextHandler(io.Discard, nil))

// startTunnel serves a registry on loopback with the gateway's
// credentials; it closes when the test ends.
func startTunnel(t *testing.T, gw *pki.Credentials) (*tunnel.Registry, string) {
	t.Helper()
	reg, err := tunnel.NewRegistry(tunnel.RegistryConfig{TLS: gw, Logger: quietLog})
	require.NoError(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	done := make(chan struct{})
	go func() { _ = reg.Serve(ln); close(done) }()
	t.Cleanup(func() { _ = reg.Close(); <-done })
	return reg, ln.Addr().String()
}

// tunnelNode is a self-hosted shard node with no listening port: a
// fiber app with the shard's role check, served on its agent's
// listener. It answers /whoami with the peer it admitted (or, when leader
// is set, as a follower: 421 naming leader), and /events with a streamed
// answer whose second event waits for next.
func tunnelNode(t *testing.T, reg *tunnel.Registry, addr string, node *pki.Credentials, leader string) (next chan struct{}) {
	t.Helper()
	next = make(chan struct{})
	app := fiber.New(fiber.Config{DisableStartupMessage: true, ErrorHandler: apierr.Handler})
	gateways := pki.Require(pki.Roles(pki.RoleGateway), nil)
	app.Post("/whoami", gateways, func(c *fiber.Ctx) error {
		if leader != "" {
			c.Set(wire.LeaderHeader, leader)
			return c.Status(fiber.StatusMisdirectedRequest).SendString("not the leader")
		}
		return c.Status(fiber.StatusCreated).SendString(pki.RequiredPeer(c).String())
	})
	app.Get("/events", gateways, func(c *fiber.Ctx) error {
		c.Set(fiber.HeaderContentType, "text/event-stream")
		c.Context().SetBodyStreamWriter(func(w *bufio.Writer) {
			fmt.Fprintf(w, "data: first\n\n")
			if w.Flush() != nil {
				return
			}
			select {
			case <-next:
			case <-time.After(tunnelWait):
			}
			fmt.Fprintf(w, "data: second\n\n")
			_ = w.Flush()
		})
		return nil
	})
	a, err := tunnel.NewAgent(tunnel.AgentConfig{Addr: addr, TLS: node, MinBackoff: 20 * time.Millisecond,
		MaxBackoff: 200 * time.Millisecond, Logger: quietLog})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan struct{})
	go func() { _ = a.Run(ctx); close(ran) }()
	served := make(chan struct{})
	go func() { _ = app.Listener(a.Listener()); close(served) }()
	t.Cleanup(func() { _ = app.Shutdown(); <-served; cancel(); <-ran })

	id := node.Identity()
	deadline := time.NewTimer(tunnelWait)
	defer deadline.Stop()
	for {
		ch := reg.Changed()
		if reg.Connected(id.Shard, id.Node) {
			return next
		}
		select {
		case <-ch:
		case <-deadline.C:
			t.Fatalf("%s never connected; sessions %+v", id, reg.Sessions())
		}
	}
}

// A gateway's client reaches a self-hosted node through the tunnel, by
// its tunnel address, for whole answers and for streams, and the node
// sees the gateway as its peer.
func TestTunnelRequestsAndStreams(t *testing.T) {
	t.Parallel()
	ca := pkitest.New(t)
	gw := ca.Creds(t, pkitest.Gateway)
	reg, addr := startTunnel(t, gw)
	next := tunnelNode(t, reg, addr, ca.Creds(t, pkitest.Shard("s1", "n1")), "")
	c := New(Config{TLS: gw, Tunnel: reg, RetryTimeout: time.Second, Logger: quietLog})
	t.Cleanup(c.Close)

	rt, err := c.Route("s1", tunnel.Addr("s1", "n1"), nil)
	require.NoError(t, err)
	require.Equal(t, "tunnel://s1/n1", rt.Current().Host())
	for range 3 { // the pool keeps its streams alive between requests
		resp, err := tunnelCall(c, rt, fasthttp.MethodPost, "/whoami")
		require.NoError(t, err)
		require.Equal(t, fasthttp.StatusCreated, resp.StatusCode(), string(resp.Body()))
		require.Equal(t, "jobbie://gateway/-/g1", string(resp.Body()), "the node saw the gateway")
	}

	ctx, cancel := context.WithTimeout(context.Background(), tunnelWait)
	defer cancel()
	began := time.Now()
	st, err := c.OpenStream(ctx, rt, "/events", http.Header{}, 10*time.Second, 1<<10)
	require.NoError(t, err)
	defer st.Close()
	require.Equal(t, http.StatusOK, st.Resp.StatusCode)
	r := bufio.NewReader(st.Resp.Body)
	line, err := r.ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "data: first\n", line)
	// The node holds the second event until next (or tunnelWait): the
	// first came through before the answer was complete.
	require.Less(t, time.Since(began), tunnelWait*2/3, "the first event was not held back with the rest")
	close(next)
	_, _ = r.ReadString('\n')
	line, err = r.ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "data: second\n", line)
}

// A tunnel address of a node that is not connected fails at once,
// and says nothing was sent: the request may go elsewhere or again.
func TestTunnelNodeNotConnected(t *testing.T) {
	t.Parallel()
	ca := pkitest.New(t)
	gw := ca.Creds(t, pkitest.Gateway)
	reg, _ := startTunnel(t, gw)
	c := New(Config{TLS: gw, Tunnel: reg, RetryTimeout: 300 * time.Millisecond, Logger: quietLog})
	t.Cleanup(c.Close)

	rt, err := c.Route("s3", tunnel.Addr("s3", "n1"), nil)
	require.NoError(t, err)
	began := time.Now()
	_, err = tunnelCall(c, rt, fasthttp.MethodPost, "/whoami")
	var f *Failure
	require.ErrorAs(t, err, &f)
	require.False(t, f.Sent, "nothing went anywhere: %v", f.Err)
	require.ErrorIs(t, err, tunnel.ErrNotConnected)
	require.Less(t, time.Since(began), 5*time.Second, "retried only within the budget, each dial failing at once")

	_, err = c.OpenStream(context.Background(), rt, "/events", http.Header{}, time.Second, 1<<10)
	require.ErrorAs(t, err, &f)
	require.False(t, f.Sent)
	require.ErrorIs(t, err, tunnel.ErrNotConnected)
}

// A route's tunnel address must name a node of its shard; a node reached
// through the tunnel must satisfy the pool's policy, as over TLS; a
// client with no tunnel refuses tunnel addresses.
func TestTunnelAddressesAreChecked(t *testing.T) {
	t.Parallel()
	ca := pkitest.New(t)
	gw := ca.Creds(t, pkitest.Gateway)
	reg, addr := startTunnel(t, gw)
	tunnelNode(t, reg, addr, ca.Creds(t, pkitest.Shard("s2", "n1")), "")

	c := New(Config{TLS: gw, Tunnel: reg, RetryTimeout: 300 * time.Millisecond, Logger: quietLog})
	t.Cleanup(c.Close)
	_, err := c.Route("s1", tunnel.Addr("s2", "n1"), nil)
	require.ErrorContains(t, err, "is a node of shard s2, not of shard s1")
	_, err = c.Route("s1", "tunnel://s1", nil)
	require.ErrorContains(t, err, "not tunnel://<shard>/<node>")

	// By address alone, the node must satisfy NodePolicy: here it is
	// not the member expected, so the stream is closed unused.
	strict := New(Config{TLS: gw, Tunnel: reg, NodePolicy: pki.ShardMember("s9"), Logger: quietLog})
	t.Cleanup(strict.Close)
	n, err := strict.Node(tunnel.Addr("s2", "n1"))
	require.NoError(t, err)
	req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.Header.SetMethod(fasthttp.MethodPost)
	req.SetRequestURI("/whoami")
	err = n.Do(req, resp, time.Now().Add(tunnelWait))
	var peer *pki.PeerError
	require.ErrorAs(t, err, &peer)
	require.ErrorContains(t, err, "not a member of shard s9")
	require.False(t, Sent(err), "a refused peer got no request")

	// The same node under the default policy (any shard node) answers.
	n, err = c.Node(tunnel.Addr("s2", "n1"))
	require.NoError(t, err)
	req.SetRequestURI("/whoami")
	resp.Reset()
	require.NoError(t, n.Do(req, resp, time.Now().Add(tunnelWait)))
	require.Equal(t, fasthttp.StatusCreated, resp.StatusCode())

	none := New(Config{TLS: gw, Logger: quietLog})
	t.Cleanup(none.Close)
	_, err = none.Route("s2", tunnel.Addr("s2", "n1"), nil)
	require.ErrorContains(t, err, "needs a tunnel")
}

// A follower behind the tunnel that names its leader's tunnel address
// sends the request there; one that names an address of its own network
// (unreachable from here) is not followed: the route's members are.
func TestTunnelFollowsOnlyTunnelLeaders(t *testing.T) {
	t.Parallel()
	ca := pkitest.New(t)
	gw := ca.Creds(t, pkitest.Gateway)
	reg, addr := startTunnel(t, gw)
	tunnelNode(t, reg, addr, ca.Creds(t, pkitest.Shard("s1", "n1")), tunnel.Addr("s1", "n2"))
	tunnelNode(t, reg, addr, ca.Creds(t, pkitest.Shard("s1", "n2")), "")
	c := New(Config{TLS: gw, Tunnel: reg, RetryTimeout: tunnelWait, Logger: quietLog})
	t.Cleanup(c.Close)

	rt, err := c.Route("s1", tunnel.Addr("s1", "n1"), nil) // n2 is known only from n1's answer
	require.NoError(t, err)
	resp, err := tunnelCall(c, rt, fasthttp.MethodPost, "/whoami")
	require.NoError(t, err)
	require.Equal(t, fasthttp.StatusCreated, resp.StatusCode())
	require.Equal(t, "tunnel://s1/n2", rt.Current().Host(), "later requests go to the leader")

	// s4's follower names a LAN address; here a loopback listener that
	// counts who dials it.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var dialed atomic.Int32
	accepted := make(chan struct{})
	go func() {
		defer close(accepted)
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			dialed.Add(1)
			_ = conn.Close()
		}
	}()
	t.Cleanup(func() { _ = ln.Close(); <-accepted })
	tunnelNode(t, reg, addr, ca.Creds(t, pkitest.Shard("s4", "n1")), ln.Addr().String())
	tunnelNode(t, reg, addr, ca.Creds(t, pkitest.Shard("s4", "n2")), "")
	rt, err = c.Route("s4", tunnel.Addr("s4", "n1"), []string{tunnel.Addr("s4", "n2")})
	require.NoError(t, err)
	resp, err = tunnelCall(c, rt, fasthttp.MethodPost, "/whoami")
	require.NoError(t, err)
	require.Equal(t, fasthttp.StatusCreated, resp.StatusCode())
	require.Zero(t, dialed.Load(), "the follower's own-network address was not dialed")
}

// This package reads tunnel addresses itself (internal/tunnel's tests
// import it); it must read exactly what the tunnel makes and accepts.
func TestTunnelAddrFormat(t *testing.T) {
	t.Parallel()
	for _, a := range []string{tunnel.Addr("s1", "n1"), tunnel.Addr("acme-1", "node_2.x"), "tunnel://s1", "tunnel://s1/n1/x",
		"tunnel:///n1", "tunnel://s1/", "tunnel://s 1/n1", "http://s1/n1", "s1/n1", ""} {
		s, n, ok := parseTunnelAddr(a)
		ts, tn, tok := tunnel.ParseAddr(a)
		require.Equal(t, []any{ts, tn, tok}, []any{s, n, ok}, a)
	}
}

func tunnelCall(c *Client, rt *Route, method, path string) (*fasthttp.Response, error) {
	req := fasthttp.AcquireRequest()
	defer fasthttp.ReleaseRequest(req)
	req.Header.SetMethod(method)
	req.SetRequestURI(path)
	resp := &fasthttp.Response{}
	err := c.Do(rt, req, resp, time.Now().Add(tunnelWait))
	if err == nil && resp.StatusCode() >= 500 {
		return resp, errors.New(string(resp.Body()))
	}
	return resp, err
}

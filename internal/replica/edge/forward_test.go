package edge_test

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/pki"
	"github.com/jobbie/jobbie/internal/pki/pkitest"
	"github.com/jobbie/jobbie/internal/replica/edge"
	"github.com/jobbie/jobbie/wire"
)

// A follower forwards a write to the leader, which runs the handler, and
// answers once it applied the write itself; a forwarded request reaching
// a node that does not lead is not forwarded again.
func TestFollowerForwardsOnce(t *testing.T) {
	t.Parallel()
	c, leader, follower := setup(t)
	gw := pkitest.Gateway

	r := c.call(follower, gw, "POST", "/put", `{"Key":"k","Value":"v1"}`)
	require.Equal(t, 200, r.status, "body: %s", r.body)
	require.Equal(t, "n1", r.json(t)["node"], "the leader ran it")
	require.Empty(t, r.header.Get(wire.AppliedHeader), "the index is the follower's alone")
	require.EqualValues(t, 1, leader.ran("/put"))
	require.EqualValues(t, 0, follower.ran("/put"))
	r = c.call(follower, gw, "GET", "/read/k", "")
	require.Equal(t, 200, r.status, "body: %s", r.body)
	require.Equal(t, map[string]any{"node": "n2", "value": "v1"}, r.json(t), "read your write, from the follower's own state")

	// A request some node forwarded already: 503, naming the leader.
	r = c.call(follower, gw, "POST", "/put", `{"Key":"k","Value":"v2"}`, forwardedHeader, "n3")
	require.Equal(t, 503, r.status, "body: %s", r.body)
	require.Equal(t, "no_leader", string(r.errorOf(t).Code))
	require.Equal(t, "no leader here", r.errorOf(t).Message)
	require.Equal(t, "1", r.header.Get(fiber.HeaderRetryAfter))
	require.Equal(t, leader.addr, r.header.Get(wire.LeaderHeader))
	require.EqualValues(t, 1, leader.ran("/put"))

	// At the leader a forwarded request is served, and its answer names
	// the index the leader applied.
	r = c.call(leader, gw, "POST", "/put", `{"Key":"k","Value":"v3"}`, forwardedHeader, "n2")
	require.Equal(t, 200, r.status, "body: %s", r.body)
	require.NotEmpty(t, r.header.Get(wire.AppliedHeader))

	// Errors come back as the leader gave them.
	r = c.call(follower, gw, "POST", "/put", `nope`)
	require.Equal(t, 400, r.status, "body: %s", r.body)
	require.Equal(t, "bad_request", string(r.errorOf(t).Code))
}

// A write that reached the leader and got no answer may have been
// applied: it is never sent again, and the caller is told so; a read
// that got none may simply be asked again. A leader that cannot be
// reached got nothing: the caller may retry.
func TestSentWriteIsNeverSentAgain(t *testing.T) {
	t.Parallel()
	c, leader, follower := setup(t)
	for _, method := range []string{"POST", "PUT"} { // PUT: what an HTTP client deems safe to repeat
		r := c.call(follower, pkitest.Gateway, method, "/hangup", `{}`)
		require.Equal(t, 503, r.status, "body: %s", r.body)
		e := r.errorOf(t)
		require.Equal(t, "unavailable", string(e.Code))
		require.Equal(t, "the test leader did not answer; the request may have been applied", e.Message)
		require.EqualValues(t, 1, leader.ran(method+" /hangup"), "sent once")
	}

	// Where the leader cannot be reached, nothing was sent.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	dead := ln.Addr().String()
	require.NoError(t, ln.Close())
	c.mu.Lock()
	c.addrs["n1"] = dead
	c.mu.Unlock()
	r := c.call(follower, pkitest.Gateway, "POST", "/put", `{"Key":"k","Value":"v"}`)
	require.Equal(t, 503, r.status, "body: %s", r.body)
	require.Equal(t, "no_leader", string(r.errorOf(t).Code))
	require.Equal(t, "the leader is unreachable", r.errorOf(t).Message)
	require.EqualValues(t, 0, leader.ran("/put"))
}

// Reads a route leaves to any node are answered from the node's own
// state; one that needs a leader known is refused once none is; writes
// get 503 without a leader to forward to.
func TestLocalReads(t *testing.T) {
	t.Parallel()
	c, leader, follower := setup(t)
	gw := pkitest.Gateway
	require.Equal(t, 200, c.call(leader, gw, "POST", "/put", `{"Key":"k","Value":"v"}`).status)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, follower.node.WaitApplied(ctx, leader.node.AppliedIndex()))
	for _, path := range []string{"/read/k", "/following/k"} {
		r := c.call(follower, gw, "GET", path, "")
		require.Equal(t, 200, r.status, "body: %s", r.body)
		require.Equal(t, "n2", r.json(t)["node"], path)
	}
	require.EqualValues(t, 0, leader.ran("/read"))

	// The follower loses its leader.
	c.stop("n1")
	waitFor(t, follower.node, func() bool { return follower.node.LeaderID() == "" })
	r := c.call(follower, gw, "GET", "/read/k", "")
	require.Equal(t, 200, r.status, "any node answers, leader or not")
	r = c.call(follower, gw, "GET", "/following/k", "")
	require.Equal(t, 503, r.status, "body: %s", r.body)
	require.Equal(t, "no_leader", string(r.errorOf(t).Code))
	require.Equal(t, "1", r.header.Get(fiber.HeaderRetryAfter))
	r = c.call(follower, gw, "POST", "/put", `{"Key":"k","Value":"v2"}`)
	require.Equal(t, 503, r.status, "body: %s", r.body)
	require.Equal(t, "no leader here", r.errorOf(t).Message)
	require.Empty(t, r.header.Get(wire.LeaderHeader))
}

// A streamed route's answer comes from the leader as it is sent, however
// large: the whole forward would refuse one this size.
func TestStreamedAnswer(t *testing.T) {
	t.Parallel()
	c, leader, follower := setup(t)
	r := c.call(follower, pkitest.Gateway, "GET", "/big", "")
	require.Equal(t, 200, r.status)
	require.Equal(t, streamSize, len(r.body))
	require.Equal(t, "n1", r.header.Get("X-Test-Node"))
	require.Equal(t, "application/octet-stream", r.header.Get(fiber.HeaderContentType))
	require.NotEmpty(t, r.header.Get("X-Request-Id"))
	require.EqualValues(t, 1, leader.ran("/big"))

	// The leader-only route is never forwarded: the follower names the
	// leader instead.
	r = c.call(follower, pkitest.Gateway, "GET", "/leader-only", "")
	require.Equal(t, 503, r.status)
	require.Equal(t, leader.addr, r.header.Get(wire.LeaderHeader))
	require.Equal(t, "n1", string(c.call(leader, pkitest.Gateway, "GET", "/leader-only", "").body))
}

// The identity a follower admitted travels to the leader, which believes
// the header naming it only from a member; the caller's credentials
// travel as sent.
func TestCallerTravelsAndIsBelievedOnlyFromMembers(t *testing.T) {
	t.Parallel()
	c, leader, follower := setup(t)
	gw, op := pkitest.Gateway, pkitest.Operator

	r := c.call(follower, gw, "GET", "/gateways", "", fiber.HeaderAuthorization, "Bearer k1")
	require.Equal(t, 200, r.status, "body: %s", r.body)
	require.Equal(t, map[string]any{"node": "n1", "caller": gw.String(), "header": gw.String(), "authorization": "Bearer k1"}, r.json(t))

	// A gateway cannot name itself another: not at the leader, not
	// through a follower.
	for _, m := range []*member{leader, follower} {
		r = c.call(m, gw, "GET", "/operators", "", callerHeader, op.String())
		require.Equal(t, 403, r.status, "body: %s", r.body)
	}
	// A member can: it admitted the caller.
	r = c.call(leader, pkitest.Control, "GET", "/operators", "", callerHeader, op.String())
	require.Equal(t, 200, r.status, "body: %s", r.body)
	require.Equal(t, op.String(), r.json(t)["caller"])

	// A route that admits anyone names no identity, and drops one sent.
	r = c.call(follower, gw, "GET", "/open", "", callerHeader, op.String())
	require.Equal(t, 200, r.status, "body: %s", r.body)
	require.Equal(t, map[string]any{"node": "n1", "caller": "", "header": "", "authorization": ""}, r.json(t))

	// Without a certificate, a gated route refuses.
	r = c.call(follower, pki.Identity{}, "GET", "/gateways", "")
	require.Equal(t, 401, r.status, "body: %s", r.body)
	require.EqualValues(t, 1, leader.ran("/gateways"), "the first call's alone")
}

// Without a caller header the forwarding node speaks for itself: nothing
// of the caller's credentials reaches the leader.
func TestForwardingNodeSpeaksForItself(t *testing.T) {
	t.Parallel()
	c, _, follower := setup(t, func(cfg *edge.Config) { cfg.CallerHeader = "" })
	r := c.call(follower, pkitest.Gateway, "GET", "/open", "", fiber.HeaderAuthorization, "Bearer k1", callerHeader, "x")
	require.Equal(t, 200, r.status, "body: %s", r.body)
	require.Equal(t, map[string]any{"node": "n1", "caller": "", "header": "x", "authorization": ""}, r.json(t))
}

package edge

import (
	"context"
	"strconv"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/pki"
	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/internal/shardclient"
	"github.com/jobbie/jobbie/wire"
)

// Serve says which node answers a request.
type Serve uint8

const (
	// ByLeader: the leader answers; a follower forwards the request.
	ByLeader Serve = iota
	// ByAny: any node answers from its own state, leader known or not.
	ByAny
	// ByFollower: a follower that knows a leader answers from its own
	// state; any other node but the leader answers 503 (it cannot vouch
	// for it). A candidate may still name a leader: hashicorp/raft lets
	// one that became candidate through a leadership transfer record the
	// leader of its term from that leader's heartbeats without stepping
	// down, and it keeps that id after the leader stops.
	ByFollower
)

// readAfterWriteWait bounds how long a follower waits to apply a write it
// forwarded before answering anyway (Config.ReadYourWrites).
const readAfterWriteWait = 2 * time.Second

// Forward is the middleware that sends a request to the leader unless
// this node leads or where (nil: ByLeader for all) says it may answer.
// A follower proxies the whole request, so the leader runs the same
// handler it would for a direct call and the caller gets its answer
// unchanged. A node forwards once: a forwarded request that reaches a
// node that does not lead gets 503 no_leader with Retry-After (and
// wire.LeaderHeader when it knows a leader), as does any request that
// must be forwarded while no leader is known.
func (g *Group) Forward(where func(*fiber.Ctx) Serve) fiber.Handler {
	return func(c *fiber.Ctx) error {
		serve := ByLeader
		if where != nil {
			serve = where(c)
		}
		return g.route(c, serve)
	}
}

// Gate is Forward for one route after admitting its caller: allow (nil:
// anyone; the handler checks keys itself) judges the caller's
// certificate, or, for a request a member forwarded, the identity that
// member admitted (Config.CallerHeader), which then travels on.
func (g *Group) Gate(allow pki.Policy, serve Serve) fiber.Handler {
	return func(c *fiber.Ctx) error {
		if allow != nil {
			id, ok := g.caller(c)
			if !ok {
				return apierr.New(apierr.Unauthenticated, "this endpoint is internal: a client certificate from the deployment's CA is required")
			}
			if err := allow(id); err != nil {
				return apierr.New(apierr.Forbidden, "%s may not call this endpoint", id)
			}
			c.Locals(callerKey{}, id)
		}
		return g.route(c, serve)
	}
}

type callerKey struct{}

// Caller is the identity Gate admitted for c.
func Caller(c *fiber.Ctx) pki.Identity {
	id, _ := c.Locals(callerKey{}).(pki.Identity)
	return id
}

// caller is the caller's certificate identity or, for a request a member
// forwarded, the identity that member admitted.
func (g *Group) caller(c *fiber.Ctx) (pki.Identity, bool) {
	id, ok := pki.Peer(c, nil)
	if !ok {
		return id, false
	}
	if g.cfg.CallerHeader == "" || g.cfg.Members == nil {
		return id, true
	}
	if fwd := c.Get(g.cfg.CallerHeader); fwd != "" && g.cfg.Members(id) == nil {
		fid, err := pki.ParseIdentity(fwd)
		return fid, err == nil
	}
	return id, true
}

// LeaderOnly is the middleware of a route the leader alone serves and
// nobody forwards (a stream of any size): elsewhere 503 no_leader, naming
// the leader in wire.LeaderHeader when known.
func (g *Group) LeaderOnly(c *fiber.Ctx) error {
	node, release, err := g.cfg.Node()
	if err != nil {
		return err
	}
	if node.State() == replica.StateLeader {
		release()
		return c.Next()
	}
	addr, _ := g.LeaderHTTP(node)
	release()
	return g.noLeader(c, addr)
}

func (g *Group) route(c *fiber.Ctx, serve Serve) error {
	node, release, err := g.cfg.Node()
	if err != nil {
		return err
	}
	forwarded := c.Get(g.cfg.ForwardedHeader) != ""
	state := node.State()
	leads := state == replica.StateLeader
	if leads || serve == ByAny || serve == ByFollower && state == replica.StateFollower && node.LeaderID() != "" {
		release()
		return g.serve(c, forwarded)
	}
	addr, known := g.LeaderHTTP(node)
	release()
	switch {
	case serve == ByFollower:
		return g.noLeader(c, "")
	case !known || forwarded:
		return g.noLeader(c, addr)
	case read(c) && g.cfg.Streamed != nil && g.cfg.Streamed(c):
		return g.forwardStream(c, addr)
	}
	return g.forward(c, addr)
}

// serve runs the request here; a forwarded one's answer names the index
// this node applied (Config.ReadYourWrites).
func (g *Group) serve(c *fiber.Ctx, forwarded bool) error {
	err := c.Next()
	if forwarded && g.cfg.ReadYourWrites {
		if node, release, nerr := g.cfg.Node(); nerr == nil {
			c.Set(wire.AppliedHeader, strconv.FormatUint(node.AppliedIndex(), 10))
			release()
		}
	}
	return err
}

func (g *Group) noLeader(c *fiber.Ctx, leader string) error {
	if leader != "" {
		c.Set(wire.LeaderHeader, leader)
	}
	return apierr.Retry(apierr.NoLeader, 1, "%s", g.cfg.NoLeader)
}

// forward sends the request to the leader at addr as received and
// copies its answer back.
func (g *Group) forward(c *fiber.Ctx, addr string) error {
	req := fasthttp.AcquireRequest()
	resp := fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	c.Request().Header.CopyTo(&req.Header)
	req.Header.Del(fiber.HeaderConnection)
	g.identify(c, func(k, v string) { req.Header.Set(k, v) }, req.Header.Del)
	req.SetRequestURI(string(c.Request().URI().RequestURI()))
	req.SetBodyRaw(c.Body())
	n, err := g.cfg.Peers.Node(addr)
	if err != nil {
		g.log.Warn(g.cfg.Name+": the leader advertises an unusable address", "leader", addr, "err", err)
		return g.noLeader(c, "")
	}
	if err := n.Do(req, resp, time.Now().Add(g.cfg.Timeout(c))); err != nil {
		return g.failed(c, addr, err)
	}
	if g.cfg.After != nil {
		g.cfg.After(c, addr, resp)
	}
	if g.cfg.ReadYourWrites {
		g.readYourWrite(resp)
	}
	out := c.Response()
	out.SetStatusCode(resp.StatusCode())
	resp.Header.VisitAll(func(k, v []byte) {
		if !hopHeader(string(k)) {
			out.Header.SetBytesKV(k, v)
		}
	})
	out.SetBody(resp.Body())
	return nil
}

// identify names this node on a forward and, if the caller travels
// (Config.CallerHeader), the identity Gate admitted; if not, it drops
// the caller's credentials: this node's certificate speaks for it.
func (g *Group) identify(c *fiber.Ctx, set func(k, v string), del func(k string)) {
	set(g.cfg.ForwardedHeader, g.cfg.NodeID)
	if g.cfg.CallerHeader == "" {
		del(fiber.HeaderAuthorization)
		return
	}
	del(g.cfg.CallerHeader)
	if id := Caller(c); id.Role != "" {
		set(g.cfg.CallerHeader, id.String())
	}
}

// readYourWrite waits until this node applied what the leader had when
// it answered.
func (g *Group) readYourWrite(resp *fasthttp.Response) {
	idx, err := strconv.ParseUint(string(resp.Header.Peek(wire.AppliedHeader)), 10, 64)
	if err != nil {
		return
	}
	node, release, err := g.cfg.Node()
	if err != nil {
		return
	}
	defer release()
	ctx, cancel := context.WithTimeout(context.Background(), readAfterWriteWait)
	defer cancel()
	_ = node.WaitApplied(ctx, idx)
}

// failed answers a forward that got no answer. One that was never sent
// (shardclient.Sent) was never applied: the caller may simply retry. A
// write that was sent may have been applied: the answer says so, so the
// caller does not repeat it blindly; the edge never sends it again.
func (g *Group) failed(c *fiber.Ctx, addr string, err error) error {
	g.log.Warn(g.cfg.Name+": forward to leader failed", "leader", addr, "path", c.Path(), "err", err)
	switch {
	case !shardclient.Sent(err):
		return apierr.Retry(apierr.NoLeader, 1, "%s", g.cfg.Unreachable)
	case read(c):
		return apierr.Retry(apierr.Unavailable, 1, "%s did not answer; retry shortly", g.cfg.Leader)
	}
	return apierr.Retry(apierr.Unavailable, 1, "%s did not answer; the request may have been applied", g.cfg.Leader)
}

// read reports a request that changes nothing.
func read(c *fiber.Ctx) bool { return c.Method() == fiber.MethodGet || c.Method() == fiber.MethodHead }

// hopHeader reports the answer headers a forward does not copy: those of
// the connection to the leader, and the applied index meant for this
// node.
func hopHeader(k string) bool {
	switch k {
	case fiber.HeaderContentLength, fiber.HeaderConnection, fiber.HeaderTransferEncoding, fiber.HeaderDate, fiber.HeaderServer, wire.AppliedHeader:
		return true
	}
	return false
}

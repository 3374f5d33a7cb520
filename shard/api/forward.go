package api

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/gossip"
	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/internal/shardclient"
	"github.com/jobbie/jobbie/wire"
)

// How a shard node behaves in a cluster of several (a Raft group):
//
//   - Writes are forwarded to the leader in one place, forwardToLeader:
//     a follower proxies the whole HTTP request, so the leader runs the
//     same handler it would for a direct call (it stamps the clock, makes
//     the ids, parks long-polls, records workers) and the caller gets the
//     leader's answer unchanged. Nothing below the HTTP layer knows about
//     forwarding, so a deposed leader's sweep never hands its commands to
//     the new leader: it gets ErrNotLeader and stops.
//   - Reads (GET, and search) are served from the node's own Pebble, as
//     fresh as its last applied entry. After forwarding a write, the
//     follower waits until it has applied the entry the leader reported
//     (wire.AppliedHeader), so a caller that writes and then reads through
//     the same node reads its write.
//   - A node forwards once: a forwarded request that reaches a node that
//     no longer leads gets 503 no_leader with Retry-After, and
//     wire.LeaderHeader when it knows a newer leader; so do writes while
//     no leader is known (an election).

// readAfterWriteWait bounds how long a follower waits to apply a write it
// forwarded before answering anyway.
const readAfterWriteWait = 2 * time.Second

// forwardToLeader is the one place a request moves to the leader: every
// /api/v1 route and the membership changes pass through it.
func (s *Server) forwardToLeader(c *fiber.Ctx) error {
	if s.node.State() == replica.StateLeader || servedLocally(c) {
		err := c.Next()
		if c.Get(wire.ForwardedHeader) != "" {
			c.Set(wire.AppliedHeader, strconv.FormatUint(s.node.AppliedIndex(), 10))
		}
		return err
	}
	addr, ok := s.LeaderHTTP()
	if !ok || c.Get(wire.ForwardedHeader) != "" {
		return noLeader(c, addr)
	}
	return s.proxyToLeader(c, addr)
}

// servedLocally reports the requests any node answers from its own state
// (a schedule preview needs none). /workers lives in the leader's memory
// (fetch and heartbeat record it).
func servedLocally(c *fiber.Ctx) bool {
	p := c.Path()
	switch c.Method() {
	case fiber.MethodGet, fiber.MethodHead:
		return strings.HasPrefix(p, "/api/v1/") && p != "/api/v1/workers"
	case fiber.MethodPost:
		return p == "/api/v1/jobs/search" || p == "/api/v1/schedules/preview"
	}
	return false
}

func noLeader(c *fiber.Ctx, leader string) error {
	if leader != "" {
		c.Set(wire.LeaderHeader, leader)
	}
	return apierr.Retry(apierr.NoLeader, 1, "this shard node does not lead and knows no leader to forward to; retry shortly")
}

// proxyToLeader sends the request to the leader as received and copies
// its answer back, after applying the write locally (wire.AppliedHeader).
func (s *Server) proxyToLeader(c *fiber.Ctx, addr string) error {
	req := fasthttp.AcquireRequest()
	resp := fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	c.Request().Header.CopyTo(&req.Header)
	req.Header.Del(fiber.HeaderAuthorization) // this node's certificate speaks for it, nothing of the caller's travels
	req.Header.Del(fiber.HeaderConnection)
	req.SetRequestURI(string(c.Request().URI().RequestURI()))
	req.Header.Set(wire.ForwardedHeader, s.cfg.NodeID)
	req.SetBodyRaw(c.Body())
	n, err := s.fwd.Node(addr)
	if err != nil {
		s.cfg.Logger.Warn("shard: the leader advertises an unusable address", "leader", addr, "err", err)
		return noLeader(c, "")
	}
	if err := n.Do(req, resp, time.Now().Add(forwardTimeout(c))); err != nil {
		s.cfg.Logger.Warn("shard: forward to leader failed", "leader", addr, "path", c.Path(), "err", err)
		if !shardclient.Sent(err) {
			// Never sent, so never applied: the caller may simply retry.
			return apierr.Retry(apierr.NoLeader, 1, "the shard leader this node knows is unreachable; retry shortly")
		}
		// Sent, perhaps applied: say so, so the caller does not repeat a
		// write blindly.
		return apierr.Retry(apierr.Unavailable, 1, "the shard leader did not answer; the request may have been applied")
	}
	s.releaseForwarded(c, addr, resp)
	if idx, err := strconv.ParseUint(string(resp.Header.Peek(wire.AppliedHeader)), 10, 64); err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), readAfterWriteWait)
		_ = s.node.WaitApplied(ctx, idx)
		cancel()
	}
	out := c.Response()
	out.SetStatusCode(resp.StatusCode())
	resp.Header.VisitAll(func(k, v []byte) {
		switch string(k) {
		case fiber.HeaderContentLength, fiber.HeaderConnection, fiber.HeaderTransferEncoding, fiber.HeaderDate, fiber.HeaderServer, wire.AppliedHeader:
			return
		}
		out.Header.SetBytesKV(k, v)
	})
	out.SetBody(resp.Body())
	return nil
}

// forwardTimeout outlasts the long-poll a fetch may ask for.
func forwardTimeout(c *fiber.Ctx) time.Duration {
	if strings.HasPrefix(c.Path(), "/api/v1/fetch") {
		return wire.MaxFetchTimeout + 15*time.Second
	}
	return 30 * time.Second
}

// LeaderHTTP is the leader's HTTP address: Raft names the leader, gossip
// says where that node serves HTTP.
func (s *Server) LeaderHTTP() (string, bool) {
	id := s.node.LeaderID()
	if id == "" {
		return "", false
	}
	if id == s.cfg.NodeID {
		return s.AdvertisedHTTP(), true
	}
	return s.httpOf(id)
}

// httpOf finds the HTTP address a member of this shard advertises.
func (s *Server) httpOf(nodeID string) (string, bool) {
	if s.cfg.Gossip == nil {
		return "", false
	}
	for _, m := range s.cfg.Gossip.Members() {
		if m.Meta.Role == gossip.RoleShard && m.Meta.ShardID == s.cfg.ShardID && m.Meta.NodeID == nodeID && m.Meta.HTTPAddr != "" {
			return m.Meta.HTTPAddr, true
		}
	}
	return "", false
}

// AdvertisedHTTP is the address peers reach this node's HTTP API on.
func (s *Server) AdvertisedHTTP() string {
	if s.cfg.AdvertiseHTTP != "" {
		return s.cfg.AdvertiseHTTP
	}
	return s.addr()
}

package shard

import (
	"context"
	"errors"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/gossip"
	"github.com/jobbie/jobbie/internal/replica"
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
//     (AppliedHeader), so a caller that writes and then reads through the
//     same node reads its write.
//   - A node forwards once: a forwarded request that reaches a node that
//     no longer leads gets 503 no_leader with Retry-After, and
//     LeaderHeader when it knows a newer leader; so do writes while no
//     leader is known (an election).
//   - The node advertises itself in the gossip pool (Config.Gossip) and
//     keeps its metadata current as leadership changes; gossip is also how
//     a follower maps the leader's Raft id to its HTTP address.
const (
	// LeaderHeader carries the leader's HTTP address on a 503 from a node
	// that knows it, so a caller may retry there at once.
	LeaderHeader = "X-Jobbie-Leader"
	// ForwardedHeader marks a request a follower forwarded (its node id).
	ForwardedHeader = "X-Jobbie-Forwarded-By"
	// AppliedHeader is the leader's applied index when it answered a
	// forwarded request.
	AppliedHeader = "X-Jobbie-Applied-Index"
)

// readAfterWriteWait bounds how long a follower waits to apply a write it
// forwarded before answering anyway.
const readAfterWriteWait = 2 * time.Second

// clusterState is the Server's cluster machinery.
type clusterState struct {
	fwd  *fasthttp.Client
	stop chan struct{}
	// mu is held while the metadata loop reads the engine, and stopped
	// set under it, so the engine may close once stopCluster returns even
	// if the loop is still waiting on a gossip broadcast.
	mu      sync.Mutex
	stopped bool
}

func newClusterState() clusterState {
	return clusterState{fwd: &fasthttp.Client{
		MaxConnsPerHost:          4096, // long-polls hold a connection each
		MaxIdleConnDuration:      time.Minute,
		ReadTimeout:              0, // per request: DoDeadline
		NoDefaultUserAgentHeader: true,
		DisablePathNormalizing:   true,
	}}
}

// forwardToLeader is the one place a request moves to the leader: every
// /api/v1 route and the membership changes pass through it.
func (s *Server) forwardToLeader(c *fiber.Ctx) error {
	if s.node.State() == replica.StateLeader || servedLocally(c) {
		err := c.Next()
		if c.Get(ForwardedHeader) != "" {
			c.Set(AppliedHeader, strconv.FormatUint(s.node.AppliedIndex(), 10))
		}
		return err
	}
	addr, ok := s.leaderHTTP()
	if !ok || c.Get(ForwardedHeader) != "" {
		return s.noLeader(c, addr)
	}
	return s.proxyToLeader(c, addr)
}

// servedLocally reports the requests any node answers from its own state.
// /workers lives in the leader's memory (fetch and heartbeat record it).
func servedLocally(c *fiber.Ctx) bool {
	p := c.Path()
	switch c.Method() {
	case fiber.MethodGet, fiber.MethodHead:
		return strings.HasPrefix(p, "/api/v1/") && p != "/api/v1/workers"
	case fiber.MethodPost:
		return p == "/api/v1/jobs/search"
	}
	return false
}

func (s *Server) noLeader(c *fiber.Ctx, leader string) error {
	if leader != "" {
		c.Set(LeaderHeader, leader)
	}
	return apierr.Retry(apierr.NoLeader, 1, "this shard node does not lead and knows no leader to forward to; retry shortly")
}

// proxyToLeader sends the request to the leader as received and copies
// its answer back, after applying the write locally (AppliedHeader).
func (s *Server) proxyToLeader(c *fiber.Ctx, addr string) error {
	req := fasthttp.AcquireRequest()
	resp := fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	c.Request().Header.CopyTo(&req.Header)
	req.Header.Del(fiber.HeaderConnection)
	req.SetRequestURI("http://" + addr + string(c.Request().URI().RequestURI()))
	req.Header.SetHost(addr)
	req.Header.Set(ForwardedHeader, s.cfg.NodeID)
	req.SetBodyRaw(c.Body())
	if err := s.cluster.fwd.DoDeadline(req, resp, time.Now().Add(s.forwardTimeout(c))); err != nil {
		s.cfg.Logger.Warn("shard: forward to leader failed", "leader", addr, "path", c.Path(), "err", err)
		var op *net.OpError
		if (errors.As(err, &op) && op.Op == "dial") || errors.Is(err, fasthttp.ErrDialTimeout) || errors.Is(err, fasthttp.ErrNoFreeConns) {
			// Never sent, so never applied: the caller may simply retry.
			return apierr.Retry(apierr.NoLeader, 1, "the shard leader this node knows is unreachable; retry shortly")
		}
		// Sent, perhaps applied: say so, so the caller does not repeat a
		// write blindly.
		return apierr.Retry(apierr.Unavailable, 1, "the shard leader did not answer; the request may have been applied")
	}
	if idx, err := strconv.ParseUint(string(resp.Header.Peek(AppliedHeader)), 10, 64); err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), readAfterWriteWait)
		_ = s.node.WaitApplied(ctx, idx)
		cancel()
	}
	out := c.Response()
	out.SetStatusCode(resp.StatusCode())
	resp.Header.VisitAll(func(k, v []byte) {
		switch string(k) {
		case fiber.HeaderContentLength, fiber.HeaderConnection, fiber.HeaderTransferEncoding, fiber.HeaderDate, fiber.HeaderServer, AppliedHeader:
			return
		}
		out.Header.SetBytesKV(k, v)
	})
	out.SetBody(resp.Body())
	return nil
}

// forwardTimeout outlasts the long-poll a fetch may ask for.
func (s *Server) forwardTimeout(c *fiber.Ctx) time.Duration {
	if strings.HasPrefix(c.Path(), "/api/v1/fetch") {
		return s.cfg.MaxFetchTimeout + 15*time.Second
	}
	return 30 * time.Second
}

// leaderHTTP is the leader's HTTP address: Raft names the leader, gossip
// says where that node serves HTTP.
func (s *Server) leaderHTTP() (string, bool) {
	id := s.node.LeaderID()
	if id == "" {
		return "", false
	}
	if id == s.cfg.NodeID {
		return s.advertisedHTTP(), true
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

// advertisedHTTP is the address peers reach this node's HTTP API on.
func (s *Server) advertisedHTTP() string {
	if s.cfg.AdvertiseHTTP != "" {
		return s.cfg.AdvertiseHTTP
	}
	if s.ln != nil {
		return s.ln.Addr().String()
	}
	return s.cfg.HTTPAddr
}

// startCluster starts keeping this node's gossip metadata current.
func (s *Server) startCluster() {
	if s.cfg.Gossip == nil {
		return
	}
	s.cluster.stop = make(chan struct{})
	go s.keepMeta()
}

// stopCluster hands the lead to another member if this node leads (a
// planned stop then costs no election timeout) and stops the metadata
// loop's use of the engine; the pool belongs to the caller.
func (s *Server) stopCluster() {
	if err := s.node.TransferLeadership(); err != nil {
		s.cfg.Logger.Warn("shard: leadership transfer before stopping", "err", err)
	}
	if s.cluster.stop == nil {
		return
	}
	s.cluster.mu.Lock()
	defer s.cluster.mu.Unlock()
	if !s.cluster.stopped {
		s.cluster.stopped = true
		close(s.cluster.stop)
	}
}

// metaRefresh is how often the advertised load is refreshed when nothing
// else changes.
const metaRefresh = 5 * time.Second

// keepMeta republishes this node's metadata whenever its leadership view
// changes (election, new term, leader learnt) or the pool changes (the
// leader's HTTP address may just have arrived).
func (s *Server) keepMeta() {
	lead, cancelLead := s.node.Subscribe()
	defer cancelLead()
	peers, cancelPeers := s.cfg.Gossip.Subscribe()
	defer cancelPeers()
	t := time.NewTicker(metaRefresh)
	defer t.Stop()
	for s.publishMeta() {
		select {
		case <-s.cluster.stop:
			return
		case <-lead:
		case <-t.C:
		case _, ok := <-peers:
			if !ok {
				return
			}
		}
	}
}

// publishMeta advertises this node's current view; false once stopped.
func (s *Server) publishMeta() bool {
	s.cluster.mu.Lock()
	if s.cluster.stopped {
		s.cluster.mu.Unlock()
		return false
	}
	st := s.node.Status()
	leaderHTTP := ""
	if st.LeaderID != "" {
		leaderHTTP, _ = s.leaderHTTP()
	}
	load := int64(len(s.namespaces()))
	s.cluster.mu.Unlock()
	// This waits for the broadcast (up to the pool's UpdateTimeout) and
	// touches only the pool.
	err := s.cfg.Gossip.UpdateMeta(func(m *gossip.Meta) {
		m.Role, m.ShardID, m.NodeID = gossip.RoleShard, s.cfg.ShardID, s.cfg.NodeID
		m.RaftState, m.Term = gossip.NormalizeRaftState(st.State), st.Term
		m.Leader, m.LeaderHTTP = st.LeaderID, leaderHTTP
		m.HTTPAddr, m.RaftAddr, m.Version, m.Load = s.advertisedHTTP(), s.node.RaftAddr(), s.cfg.Version, load
	})
	if err != nil && !errors.Is(err, gossip.ErrClosed) {
		s.cfg.Logger.Debug("shard: gossip metadata", "err", err)
	}
	return true
}

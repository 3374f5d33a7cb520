package api

import (
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/jobbie/jobbie/internal/gossip"
	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/internal/replica/edge"
	"github.com/jobbie/jobbie/internal/shardclient"
	"github.com/jobbie/jobbie/wire"
)

// How a shard node behaves in a cluster of several (a Raft group): its
// edge (internal/replica/edge) forwards every /api/v1 route and the
// membership changes to the leader, unless servedLocally says any node
// answers; reads come from the node's own Pebble, and after forwarding a
// write the follower applies it before answering (read-your-writes). The
// caller's credentials stay behind: the leader judges the follower's
// certificate, a member of this shard.

// newGroup is this node's edge of its shard's group; peers reach the
// other members (their certificates must be this shard's).
func (s *Server) newGroup(peers *shardclient.Client) *edge.Group {
	return edge.New(edge.Config{
		Name: "shard", Group: "shard " + s.cfg.ShardID, NodeID: s.cfg.NodeID, ShardID: s.cfg.ShardID, Version: s.cfg.Version,
		Node: edge.Fixed(s.node), Advertised: s.AdvertisedHTTP,
		HTTPOf: func(_ *replica.Node, id string) (string, bool) { return s.httpOf(id) },
		Peers:  peers, Logger: s.cfg.Logger,
		ForwardedHeader: wire.ForwardedHeader, ReadYourWrites: true, Timeout: forwardTimeout, After: s.releaseForwarded,
		NoLeader:    "this shard node does not lead and knows no leader to forward to; retry shortly",
		Unreachable: "the shard leader this node knows is unreachable; retry shortly",
		Leader:      "the shard leader",
		CheckAdd:    checkAdd,
	})
}

// servedLocally says which requests any node answers from its own state
// (a schedule preview needs none). /workers lives in the leader's memory
// (fetch and heartbeat record it), and so do the values of the alert
// rules' last evaluation (/alerts); /signing-keys may make the
// namespace's first key.
func servedLocally(c *fiber.Ctx) edge.Serve {
	p := c.Path()
	switch c.Method() {
	case fiber.MethodGet, fiber.MethodHead:
		if strings.HasPrefix(p, "/api/v1/") && p != "/api/v1/workers" && p != "/api/v1/signing-keys" && !isAlerts(p) {
			return edge.ByAny
		}
	case fiber.MethodPost:
		if p == "/api/v1/jobs/search" || p == "/api/v1/schedules/preview" {
			return edge.ByAny
		}
	}
	return edge.ByLeader
}

func isAlerts(p string) bool { return p == "/api/v1/alerts" || strings.HasPrefix(p, "/api/v1/alerts/") }

// forwardTimeout outlasts the long-poll a fetch may ask for.
func forwardTimeout(c *fiber.Ctx) time.Duration {
	if strings.HasPrefix(c.Path(), "/api/v1/fetch") {
		return wire.MaxFetchTimeout + 15*time.Second
	}
	return 30 * time.Second
}

// Group is this node's edge of its shard's group: forwarding, status,
// members, joining.
func (s *Server) Group() *edge.Group { return s.group }

// LeaderHTTP is the leader's HTTP address: Raft names the leader, gossip
// says where that node serves HTTP.
func (s *Server) LeaderHTTP() (string, bool) { return s.group.LeaderHTTP(s.node) }

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

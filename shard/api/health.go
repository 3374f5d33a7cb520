package api

import (
	"slices"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/wire"
)

// healthRoutes serves GET /api/v1/cluster, the shard's health as a tenant
// may see it; a GET is answered by the node asked, from what it knows.
func (s *Server) healthRoutes(api fiber.Router) {
	api.Get("/cluster", s.clusterHealth)
}

// listening fails, naming the listener and its error, while one of the
// process's listeners cannot accept connections (Config.Listening).
func (s *Server) listening() error {
	if s.cfg.Listening == nil {
		return nil
	}
	if err := s.cfg.Listening(); err != nil {
		return apierr.Retry(apierr.Unavailable, 1, "not ready: %v", err)
	}
	return nil
}

func (s *Server) clusterHealth(c *fiber.Ctx) error {
	h, err := s.Health()
	return reply(c, h, err)
}

// Health is the group as this node sees it: every member by id, its role
// and whether this node hears from it (itself, or its gossip). Raft and
// gossip addresses stay out: they are the operator's, not the tenant's.
func (s *Server) Health() (wire.ClusterHealth, error) {
	ms, err := s.node.Members()
	if err != nil {
		return wire.ClusterHealth{}, err
	}
	leader := s.node.LeaderID()
	out := wire.ClusterHealth{ShardID: s.cfg.ShardID, LeaderID: leader, Nodes: make([]wire.ClusterNode, 0, len(ms))}
	voters, reached := 0, 0
	for _, m := range ms {
		n := wire.ClusterNode{ID: m.ID, Role: wire.NodeFollower, Status: wire.NodeUnreachable}
		switch {
		case m.ID == leader: // from the one LeaderID read, so roles agree with leader_id
			n.Role = wire.NodeLeader
		case !m.Voter:
			n.Role = wire.NodeNonvoter
		}
		up := m.ID == s.cfg.NodeID
		if !up {
			_, up = s.httpOf(m.ID)
		}
		if up {
			n.Status = wire.NodeHealthy
		}
		if m.Voter {
			voters++
			if up {
				reached++
			}
		}
		out.Nodes = append(out.Nodes, n)
	}
	out.Healthy = leader != "" && reached > voters/2
	slices.SortFunc(out.Nodes, func(a, b wire.ClusterNode) int { return strings.Compare(a.ID, b.ID) })
	return out, nil
}

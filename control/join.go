package control

import (
	"context"

	"github.com/jobbie/jobbie/internal/gossip"
	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/internal/replica/edge"
	"github.com/jobbie/jobbie/wire"
)

// join asks the members in Config.Join, then the control nodes gossip
// knows, to add this node (edge.Group.Join), until one does or a leader
// reaches it.
func (s *Server) join(ctx context.Context, node *replica.Node) error {
	r := wire.AddMemberRequest{NodeID: s.cfg.NodeID, RaftAddr: s.raftAdvertise(node), HTTPAddr: s.AdvertisedHTTP()}
	return s.api.Group().Join(ctx, r, s.joinTargets)
}

func (s *Server) raftAdvertise(node *replica.Node) string {
	if s.cfg.RaftAdvertise != "" {
		return s.cfg.RaftAdvertise
	}
	return node.RaftAddr()
}

func (s *Server) joinTargets() []string {
	out := append([]string(nil), s.cfg.Join...)
	if s.cfg.Gossip != nil {
		for _, m := range s.cfg.Gossip.Members() {
			if m.Meta.Role == gossip.RoleControl && m.Meta.NodeID != s.cfg.NodeID {
				out = append(out, m.Meta.HTTPAddr)
			}
		}
	}
	return out
}

// Status is this node's view of its group.
func (s *Server) Status() (edge.NodeStatus, error) { return s.api.Group().Status() }

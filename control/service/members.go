package service

import (
	"context"

	"github.com/cockroachdb/pebble"

	"github.com/jobbie/jobbie/control/state"
	"github.com/jobbie/jobbie/internal/gossip"
	"github.com/jobbie/jobbie/internal/replica"
)

// How control runs as a group of 1, 3 or 5 nodes (as a shard does, through
// internal/replica/edge): a node with no state either bootstraps a group
// of its own or, given Config.Join, asks a member to add it (POST
// /internal/v1/members, forwarded to the leader); Raft is mutual TLS
// between control certificates. Writes go to the leader (api/forward.go);
// leader-only work (the signing key, usage pulls, invoice freezing) checks
// IsLeader, so it starts on whichever node wins an election. What the
// group records of its own is where each member serves HTTP.

// RecordMemberHTTP proposes a member's HTTP address unless the state
// already holds it.
func (s *Service) RecordMemberHTTP(ctx context.Context, id, addr string) error {
	have, err := ViewValue(s, func(r pebble.Reader) (string, error) {
		b, _, err := state.MemberHTTP(r, id)
		return b, err
	})
	if err != nil || have == addr {
		return err
	}
	_, err = propose(ctx, s, state.OpSetMemberHTTP, &state.SetMemberHTTPCmd{NodeID: id, HTTPAddr: addr})
	return err
}

// MemberHTTP is where member id of node's group serves HTTP: as the
// replicated state records it (when it joined and when it leads), or else
// as gossip says. The address is only a hint: a forward admits nothing
// but a control certificate at the other end.
func (s *Service) MemberHTTP(node *replica.Node, id string) (string, bool) {
	if b, ok, err := state.MemberHTTP(node.DB(), id); err == nil && ok && len(b) > 0 {
		return b, true
	}
	if s.cfg.Gossip == nil {
		return "", false
	}
	for _, m := range s.cfg.Gossip.Members() {
		if m.Meta.Role == gossip.RoleControl && m.Meta.NodeID == id && m.Meta.HTTPAddr != "" {
			return m.Meta.HTTPAddr, true
		}
	}
	return "", false
}

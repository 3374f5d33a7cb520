package service

import (
	"context"
	"errors"
	"time"

	"github.com/cockroachdb/pebble"

	"github.com/jobbie/jobbie/control/state"
	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/gossip"
	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/wire"
)

// How control runs as a group of 1, 3 or 5 nodes (the shard's way, see
// shard/api/forward.go): a node with no state either bootstraps a group of
// its own or, given Config.Join, asks a member to add it (POST
// /internal/v1/members, forwarded to the leader); Raft is mutual TLS
// between control certificates. Writes go to the leader (forward.go);
// leader-only work (the signing key, usage pulls, invoice freezing) checks
// IsLeader, so it starts on whichever node wins an election.

// Status is this node's view of its group.
func (s *Service) Status() (NodeStatus, error) {
	node, release, err := s.Acquire()
	if err != nil {
		return NodeStatus{}, err
	}
	defer release()
	out := NodeStatus{Status: node.Status(), HTTPAddr: s.cfg.AdvertisedHTTP(), RaftAddr: node.RaftAddr()}
	out.LeaderHTTP, _ = s.LeaderHTTP(node)
	return out, nil
}

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

// membership runs a membership change on the node and maps its errors.
func (s *Service) membership(ctx context.Context, change func(context.Context, *replica.Node) error) error {
	node, release, err := s.Acquire()
	if err != nil {
		return err
	}
	defer release()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	switch err := change(ctx, node); {
	case err == nil:
		return nil
	case errors.Is(err, replica.ErrUnknownMember):
		return apierr.New(apierr.NotFound, "%v", err)
	case errors.Is(err, replica.ErrMemberConflict):
		return apierr.New(apierr.Conflict, "%v", err)
	default:
		return node.ProposeError(err)
	}
}

// LeaderHTTP is the leader's HTTP address: Raft names the leader; the
// replicated state (each member's address, recorded when it joined and
// when it leads) or else gossip says where that node serves. The address
// is only a hint: the forward admits nothing but a control certificate at
// the other end.
func (s *Service) LeaderHTTP(node *replica.Node) (string, bool) {
	id := node.LeaderID()
	switch {
	case id == "":
		return "", false
	case id == s.cfg.NodeID:
		return s.cfg.AdvertisedHTTP(), true
	}
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

// NodeStatus is GET /internal/v1/status: this node's view of its group.
type NodeStatus struct {
	replica.Status
	HTTPAddr   string `json:"http_addr"`
	RaftAddr   string `json:"raft_addr"`
	LeaderHTTP string `json:"leader_http,omitempty"`
}

// Members is the group's members as this node's Raft configuration has
// them, with where each serves HTTP.
func (s *Service) Members() (wire.MemberList, error) {
	node, release, err := s.Acquire()
	if err != nil {
		return wire.MemberList{}, err
	}
	defer release()
	ms, err := node.Members()
	if err != nil {
		return wire.MemberList{}, err
	}
	out := wire.MemberList{LeaderID: node.LeaderID(), Members: make([]wire.Member, 0, len(ms))}
	for _, m := range ms {
		b, _, err := state.MemberHTTP(node.DB(), m.ID)
		if err != nil {
			return wire.MemberList{}, err
		}
		out.Members = append(out.Members, wire.Member{NodeID: m.ID, RaftAddr: m.Addr, Voter: m.Voter, Leader: m.Leader, HTTPAddr: b})
	}
	return out, nil
}

// AddMember adds a voter to the group and records where it serves HTTP.
// The caller checked the request's shape.
func (s *Service) AddMember(ctx context.Context, r wire.AddMemberRequest) error {
	if err := s.membership(ctx, func(ctx context.Context, n *replica.Node) error {
		return n.AddVoter(ctx, r.NodeID, r.RaftAddr)
	}); err != nil {
		return err
	}
	if r.HTTPAddr != "" {
		return s.RecordMemberHTTP(ctx, r.NodeID, r.HTTPAddr)
	}
	return nil
}

// RemoveMember removes member id from the group.
func (s *Service) RemoveMember(ctx context.Context, id string) error {
	return s.membership(ctx, func(ctx context.Context, n *replica.Node) error {
		return n.RemoveServer(ctx, id)
	})
}

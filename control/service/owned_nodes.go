package service

import (
	"context"

	"github.com/jobbie/jobbie/control/state"
	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// Replacing and adding a self-hosted shard's nodes. A node that lost its
// volume lost its key, and its node id is spent; the owner removes it
// from control's list (its certificate is refused from then on: renewal
// and the gateways' tunnel listeners admit only listed nodes) and mints
// a token that joins more nodes to the same shard, under node ids the
// shard never had: a removed node's id stays retired, so a certificate
// left on a dead node's disk never names a member again.
//
// Both ride existing commands (create_join_token, revoke_shard) with a
// field of their own, and leave those commands' top-level tenant empty:
// a control node of an older version applying one finds no tenant and
// refuses it, changing nothing, instead of taking it for a new shard or
// a revocation of the whole shard.

// CreateNodeJoinToken mints a token that joins req.Nodes more nodes to
// tenant tid's self-hosted shard id, under node ids it never had. The
// token is in the answer only. A shard with an unexpired token that has
// nodes left to join is a 409: one token at a time.
func (s *Service) CreateNodeJoinToken(ctx context.Context, tid, id string, req wire.AddNodesRequest) (wire.JoinToken, error) {
	if tenancy.ValidateTenantID(tid) != nil || !ShardIDRE.MatchString(id) {
		return wire.JoinToken{}, apierr.New(apierr.NotFound, "shard %q not found", id)
	}
	nodes, ttl, tok, err := newJoinToken(req.Nodes, req.ExpiresIn)
	if err != nil {
		return wire.JoinToken{}, err
	}
	cmd := state.CreateJoinTokenCmd{Hash: hashToken(tok), TTL: ttl, Nodes: nodes, AddTo: &state.AddNodes{TenantID: tid, ShardID: id}}
	out, err := propose(ctx, s, state.OpCreateJoinToken, &cmd)
	if err != nil {
		return wire.JoinToken{}, err
	}
	out.Token = tok
	return out, nil
}

// RemoveShardNode drops node from tenant tid's self-hosted shard id's
// joined nodes, for good: its id is retired. The shard's last node is
// not removed (409: revoke the shard, or join another node first).
// Taking it out of the shard's own Raft group is the tenant's, on its
// nodes.
func (s *Service) RemoveShardNode(ctx context.Context, tid, id, node string) error {
	if tenancy.ValidateTenantID(tid) != nil || !ShardIDRE.MatchString(id) {
		return apierr.New(apierr.NotFound, "shard %q not found", id)
	}
	if !ShardIDRE.MatchString(node) {
		return apierr.New(apierr.NotFound, "node %q not found", node)
	}
	_, err := propose(ctx, s, state.OpRevokeShard, &state.RevokeShardCmd{Node: &state.RemoveNode{TenantID: tid, ShardID: id, NodeID: node}})
	return err
}

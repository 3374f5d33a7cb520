package control

import (
	"context"
	"slices"
	"time"

	"github.com/jobbie/jobbie/control/internal/layout"
	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/replica"
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

// maxShardNodes bounds a self-hosted shard's joined nodes: a Raft group
// of 5, with room to add replacements before removing the dead.
const maxShardNodes = 7

// addNodes is a create_join_token command's target when the token joins
// nodes to an existing shard.
type addNodes struct {
	TenantID string `json:"tenant_id"`
	ShardID  string `json:"shard_id"`
}

// removeNode is a revoke_shard command's target when it removes one
// node from a shard's joined nodes.
type removeNode struct {
	TenantID string `json:"tenant_id"`
	ShardID  string `json:"shard_id"`
	NodeID   string `json:"node_id"`
}

// CreateNodeJoinToken mints a token that joins req.Nodes more nodes to
// tenant tid's self-hosted shard id, under node ids it never had. The
// token is in the answer only. A shard with an unexpired token that has
// nodes left to join is a 409: one token at a time.
func (s *Server) CreateNodeJoinToken(ctx context.Context, tid, id string, req wire.AddNodesRequest) (wire.JoinToken, error) {
	if tenancy.ValidateTenantID(tid) != nil || !shardIDRE.MatchString(id) {
		return wire.JoinToken{}, apierr.New(apierr.NotFound, "shard %q not found", id)
	}
	nodes, ttl, tok, err := newJoinToken(req.Nodes, req.ExpiresIn)
	if err != nil {
		return wire.JoinToken{}, err
	}
	cmd := createJoinTokenCmd{Hash: hashToken(tok), TTL: ttl, Nodes: nodes, AddTo: &addNodes{TenantID: tid, ShardID: id}}
	out, err := propose(ctx, s, opCreateJoinToken, &cmd)
	if err != nil {
		return wire.JoinToken{}, err
	}
	out.Token = tok
	return out, nil
}

func applyAddNodesToken(tx *replica.Tx, c *createJoinTokenCmd) (wire.JoinToken, error) {
	t := c.AddTo
	var sh ownedShard
	if !must(getJSON(tx, layout.OwnedShard(t.TenantID, t.ShardID), &sh)) {
		return wire.JoinToken{}, apierr.New(apierr.NotFound, "shard %q not found", t.ShardID)
	}
	if sh.TokenHash != "" {
		var live joinToken
		if must(getJSON(tx, layout.JoinToken(sh.TokenHash), &live)) {
			if tx.Now.Before(live.ExpiresAt) {
				return wire.JoinToken{}, apierr.New(apierr.Conflict, "shard %q has a join token with nodes left to join until %s: use it, or mint another once it expires",
					sh.ID, live.ExpiresAt.Format(time.RFC3339))
			}
			mustDelete(tx, layout.JoinToken(sh.TokenHash)) // expired: replaced
		}
	}
	if len(sh.Nodes)+c.Nodes > maxShardNodes {
		return wire.JoinToken{}, apierr.New(apierr.Conflict, "shard %q has %d nodes; with %d more it would pass %d: remove nodes first",
			sh.ID, len(sh.Nodes), c.Nodes, maxShardNodes)
	}
	tok := joinToken{TenantID: t.TenantID, ShardID: t.ShardID, ExpiresAt: tx.Now.Add(c.TTL), Nodes: c.Nodes, Joined: []string{}}
	sh.TokenHash = c.Hash
	sh.Expected = len(sh.Nodes) + c.Nodes
	mustSetJSON(tx, layout.JoinToken(c.Hash), tok)
	mustSetJSON(tx, layout.OwnedShard(t.TenantID, t.ShardID), sh)
	return wire.JoinToken{ShardID: sh.ID, Name: sh.Name, Nodes: c.Nodes, ExpiresAt: tok.ExpiresAt}, nil
}

// RemoveShardNode drops node from tenant tid's self-hosted shard id's
// joined nodes, for good: its id is retired. The shard's last node is
// not removed (409: revoke the shard, or join another node first).
// Taking it out of the shard's own Raft group is the tenant's, on its
// nodes.
func (s *Server) RemoveShardNode(ctx context.Context, tid, id, node string) error {
	if tenancy.ValidateTenantID(tid) != nil || !shardIDRE.MatchString(id) {
		return apierr.New(apierr.NotFound, "shard %q not found", id)
	}
	if !shardIDRE.MatchString(node) {
		return apierr.New(apierr.NotFound, "node %q not found", node)
	}
	_, err := propose(ctx, s, opRevokeShard, &revokeShardCmd{Node: &removeNode{TenantID: tid, ShardID: id, NodeID: node}})
	return err
}

func applyRemoveShardNode(tx *replica.Tx, c *removeNode) (replica.None, error) {
	var sh ownedShard
	if !must(getJSON(tx, layout.OwnedShard(c.TenantID, c.ShardID), &sh)) {
		return replica.None{}, apierr.New(apierr.NotFound, "shard %q not found", c.ShardID)
	}
	i := slices.Index(sh.Nodes, c.NodeID)
	if i < 0 {
		return replica.None{}, apierr.New(apierr.NotFound, "node %q of shard %q not found", c.NodeID, c.ShardID)
	}
	if len(sh.Nodes) == 1 {
		return replica.None{}, apierr.New(apierr.Conflict, "node %q is shard %q's last: join another node first, or revoke the shard", c.NodeID, c.ShardID)
	}
	expected := sh.expectedNodes() - 1
	sh.Nodes = slices.Delete(slices.Clone(sh.Nodes), i, i+1)
	sh.Retired = append(sh.Retired, c.NodeID)
	sh.Expected = max(expected, len(sh.Nodes))
	mustSetJSON(tx, layout.OwnedShard(c.TenantID, c.ShardID), sh)
	return replica.None{}, nil
}

package state

import (
	"slices"
	"time"

	"github.com/cockroachdb/pebble"
	"github.com/jobbie/jobbie/control/state/internal/layout"
	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/wire"
)

// maxOwnedShards bounds a tenant's self-hosted shards.
const maxOwnedShards = 100

// OwnedShard is the stored record of a tenant's self-hosted shard.
type OwnedShard struct {
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	TenantID  string    `json:"tenant_id"`
	Nodes     []string  `json:"nodes"`
	CreatedAt time.Time `json:"created_at"`
	TokenHash string    `json:"token_hash,omitempty"` // its join token's, while unspent
	// Expected is how many nodes its token was minted for (0 in records
	// older than the field: read as len(Nodes)).
	Expected int `json:"expected,omitempty"`
	// Retired are the ids of nodes removed from it (owned_nodes.go): never
	// joined again, so a removed node's certificate names no member.
	Retired []string `json:"retired,omitempty"`
}

// ExpectedNodes is how many nodes the shard's token was minted for.
func (sh OwnedShard) ExpectedNodes() int {
	if sh.Expected == 0 {
		return len(sh.Nodes)
	}
	return sh.Expected
}

// JoinToken is the stored record of a join token (keyed by its hash; the
// token itself is never stored).
type JoinToken struct {
	TenantID  string    `json:"tenant_id"`
	ShardID   string    `json:"shard_id"`
	ExpiresAt time.Time `json:"expires_at"`
	Nodes     int       `json:"nodes"`
	Joined    []string  `json:"joined"`
}

type CreateJoinTokenCmd struct {
	TenantID string        `json:"tenant_id"`
	ShardID  string        `json:"shard_id"`
	Name     string        `json:"name"`
	Hash     string        `json:"hash"`
	TTL      time.Duration `json:"ttl"`
	Nodes    int           `json:"nodes"`
	// AddTo, set, makes the token join nodes to an existing shard
	// (owned_nodes.go); TenantID and ShardID are then empty.
	AddTo *AddNodes `json:"add_to,omitempty"`
}

type JoinShardCmd struct {
	Hash   string `json:"hash"`
	NodeID string `json:"node_id"`
}

type RevokeShardCmd struct {
	TenantID string `json:"tenant_id"`
	ShardID  string `json:"shard_id"`
	// Node, set, removes one node instead (owned_nodes.go); TenantID and
	// ShardID are then empty.
	Node *RemoveNode `json:"node,omitempty"`
}

func applyCreateJoinToken(tx *replica.Tx, c *CreateJoinTokenCmd) (wire.JoinToken, error) {
	if c.AddTo != nil {
		return applyAddNodesToken(tx, c)
	}
	if _, err := LoadTenant(tx, c.TenantID); err != nil {
		return wire.JoinToken{}, businessErr(err)
	}
	if must(count(tx, layout.OwnedShards(c.TenantID))) >= maxOwnedShards {
		return wire.JoinToken{}, apierr.New(apierr.Conflict, "a tenant may have at most %d self-hosted shards", maxOwnedShards)
	}
	sh := OwnedShard{ID: c.ShardID, Name: c.Name, TenantID: c.TenantID, Nodes: []string{}, CreatedAt: tx.Now, TokenHash: c.Hash,
		Expected: c.Nodes}
	tok := JoinToken{TenantID: c.TenantID, ShardID: c.ShardID, ExpiresAt: tx.Now.Add(c.TTL), Nodes: c.Nodes, Joined: []string{}}
	mustSetJSON(tx, layout.OwnedShard(c.TenantID, c.ShardID), sh)
	mustSet(tx, layout.ShardOwner(c.ShardID), []byte(c.TenantID))
	mustSetJSON(tx, layout.JoinToken(c.Hash), tok)
	return wire.JoinToken{ShardID: c.ShardID, Name: c.Name, Nodes: c.Nodes, ExpiresAt: tok.ExpiresAt}, nil
}

// ErrBadToken is every refusal of a token that does not (or no longer)
// join: unknown, spent or of a revoked shard read alike.
func ErrBadToken() error {
	return apierr.New(apierr.Unauthenticated, "the join token is not valid: it is unknown, spent or revoked")
}

func applyJoinShard(tx *replica.Tx, c *JoinShardCmd) (replica.None, error) {
	var tok JoinToken
	if !must(getJSON(tx, layout.JoinToken(c.Hash), &tok)) {
		return replica.None{}, ErrBadToken()
	}
	if !tx.Now.Before(tok.ExpiresAt) {
		return replica.None{}, apierr.New(apierr.Unauthenticated, "the join token expired at %s: mint another", tok.ExpiresAt.Format(time.RFC3339))
	}
	var sh OwnedShard
	if !must(getJSON(tx, layout.OwnedShard(tok.TenantID, tok.ShardID), &sh)) {
		return replica.None{}, ErrBadToken()
	}
	if slices.Contains(tok.Joined, c.NodeID) {
		return replica.None{}, apierr.New(apierr.Conflict, "node %q has joined with this token already", c.NodeID)
	}
	if slices.Contains(sh.Nodes, c.NodeID) || slices.Contains(sh.Retired, c.NodeID) {
		return replica.None{}, apierr.New(apierr.Conflict, "node id %q is taken in shard %s (a member, or removed): join under a new node id", c.NodeID, sh.ID)
	}
	tok.Joined = append(tok.Joined, c.NodeID)
	if !slices.Contains(sh.Nodes, c.NodeID) {
		sh.Nodes = append(sh.Nodes, c.NodeID)
	}
	if len(tok.Joined) >= tok.Nodes {
		mustDelete(tx, layout.JoinToken(c.Hash)) // spent
		sh.TokenHash = ""
	} else {
		mustSetJSON(tx, layout.JoinToken(c.Hash), tok)
	}
	mustSetJSON(tx, layout.OwnedShard(sh.TenantID, sh.ID), sh)
	return replica.None{}, nil
}

// SelfHostedShard is the record of shard id when it is a self-hosted
// shard of tenant tid (ok false for a hosted shard or another tenant's).
func SelfHostedShard(r pebble.Reader, tid, id string) (OwnedShard, bool, error) {
	var sh OwnedShard
	if id == "" || tid == "" {
		return sh, false, nil
	}
	owner, err := ShardOwner(r, id)
	if err != nil || owner != tid {
		return sh, false, err
	}
	ok, err := getJSON(r, layout.OwnedShard(tid, id), &sh)
	return sh, ok, err
}

func applyRevokeShard(tx *replica.Tx, c *RevokeShardCmd) (replica.None, error) {
	if c.Node != nil {
		return applyRemoveShardNode(tx, c.Node)
	}
	var sh OwnedShard
	if !must(getJSON(tx, layout.OwnedShard(c.TenantID, c.ShardID), &sh)) {
		return replica.None{}, apierr.New(apierr.NotFound, "shard %q not found", c.ShardID)
	}
	if n := must(getUint64(tx, layout.ShardLoad(sh.ID))); n > 0 {
		return replica.None{}, apierr.New(apierr.Conflict, "shard %q holds %d namespaces: move or delete them first", sh.ID, n)
	}
	if sh.TokenHash != "" {
		mustDelete(tx, layout.JoinToken(sh.TokenHash))
	}
	mustDelete(tx, layout.OwnedShard(c.TenantID, c.ShardID))
	mustDelete(tx, layout.ShardOwner(c.ShardID))
	return replica.None{}, nil
}

// ShardOwner is the tenant owning shard id, "" for a hosted shard.
func ShardOwner(r pebble.Reader, id string) (string, error) {
	v, ok, err := getRaw(r, layout.ShardOwner(id))
	if err != nil || !ok {
		return "", err
	}
	return string(v), nil
}

// MaxShardNodes bounds a self-hosted shard's joined nodes: a Raft group
// of 5, with room to add replacements before removing the dead.
const MaxShardNodes = 7

// AddNodes is a create_join_token command's target when the token joins
// nodes to an existing shard.
type AddNodes struct {
	TenantID string `json:"tenant_id"`
	ShardID  string `json:"shard_id"`
}

// RemoveNode is a revoke_shard command's target when it removes one
// node from a shard's joined nodes.
type RemoveNode struct {
	TenantID string `json:"tenant_id"`
	ShardID  string `json:"shard_id"`
	NodeID   string `json:"node_id"`
}

func applyAddNodesToken(tx *replica.Tx, c *CreateJoinTokenCmd) (wire.JoinToken, error) {
	t := c.AddTo
	var sh OwnedShard
	if !must(getJSON(tx, layout.OwnedShard(t.TenantID, t.ShardID), &sh)) {
		return wire.JoinToken{}, apierr.New(apierr.NotFound, "shard %q not found", t.ShardID)
	}
	if sh.TokenHash != "" {
		var live JoinToken
		if must(getJSON(tx, layout.JoinToken(sh.TokenHash), &live)) {
			if tx.Now.Before(live.ExpiresAt) {
				return wire.JoinToken{}, apierr.New(apierr.Conflict, "shard %q has a join token with nodes left to join until %s: use it, or mint another once it expires",
					sh.ID, live.ExpiresAt.Format(time.RFC3339))
			}
			mustDelete(tx, layout.JoinToken(sh.TokenHash)) // expired: replaced
		}
	}
	if len(sh.Nodes)+c.Nodes > MaxShardNodes {
		return wire.JoinToken{}, apierr.New(apierr.Conflict, "shard %q has %d nodes; with %d more it would pass %d: remove nodes first",
			sh.ID, len(sh.Nodes), c.Nodes, MaxShardNodes)
	}
	tok := JoinToken{TenantID: t.TenantID, ShardID: t.ShardID, ExpiresAt: tx.Now.Add(c.TTL), Nodes: c.Nodes, Joined: []string{}}
	sh.TokenHash = c.Hash
	sh.Expected = len(sh.Nodes) + c.Nodes
	mustSetJSON(tx, layout.JoinToken(c.Hash), tok)
	mustSetJSON(tx, layout.OwnedShard(t.TenantID, t.ShardID), sh)
	return wire.JoinToken{ShardID: sh.ID, Name: sh.Name, Nodes: c.Nodes, ExpiresAt: tok.ExpiresAt}, nil
}

func applyRemoveShardNode(tx *replica.Tx, c *RemoveNode) (replica.None, error) {
	var sh OwnedShard
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
	expected := sh.ExpectedNodes() - 1
	sh.Nodes = slices.Delete(slices.Clone(sh.Nodes), i, i+1)
	sh.Retired = append(sh.Retired, c.NodeID)
	sh.Expected = max(expected, len(sh.Nodes))
	mustSetJSON(tx, layout.OwnedShard(c.TenantID, c.ShardID), sh)
	return replica.None{}, nil
}

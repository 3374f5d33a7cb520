package wire

import "time"

// Shapes of the internal API between Jobbie's own processes
// (docs/internal-api.md): never sent to a tenant.

// NamespacePlacement is control's answer to a gateway asking where a
// namespace lives: its shard, the shard's configured address or first
// registered member, and every registered member's HTTP address (tried
// when gossip names no leader).
type NamespacePlacement struct {
	Name         string    `json:"name"`
	CreatedAt    time.Time `json:"created_at"`
	ShardID      string    `json:"shard_id"`
	ShardAddr    string    `json:"shard_addr"`
	ShardMembers []string  `json:"shard_members,omitempty"`
}

// Revocations is every revoked key id and the list's version, which grows
// by one with each revocation.
type Revocations struct {
	Version uint64   `json:"version"`
	Revoked []string `json:"revoked"`
}

// ShardRegistration is what a shard cluster tells control about itself
// (POST /control/v1/shards/register). Capacity is the most namespaces it
// should hold (0: control's default).
type ShardRegistration struct {
	ShardID  string        `json:"shard_id"`
	Members  []ShardMember `json:"members"`
	Capacity uint64        `json:"capacity,omitempty"`
	Version  string        `json:"version,omitempty"`
}

// ShardMember is one node of a shard cluster, as it registered.
type ShardMember struct {
	NodeID   string `json:"node_id"`
	HTTPAddr string `json:"http_addr"`
	RaftAddr string `json:"raft_addr,omitempty"`
}

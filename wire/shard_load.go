package wire

import "time"

// ShardLoad is one shard cluster as the operator's GET /control/v1/shards
// lists it: where control reaches it, how many namespaces it holds of how
// many it may take, the members it registered, and its leader as the
// answering control node's gossip pool knows it.
type ShardLoad struct {
	ID               string        `json:"id"`
	Addr             string        `json:"addr"`
	Namespaces       uint64        `json:"namespaces"`
	Capacity         uint64        `json:"capacity"`
	Static           bool          `json:"static"` // named by control's --shard, not registered
	Members          []ShardMember `json:"members"`
	Version          string        `json:"version,omitempty"`
	RegisteredAt     *time.Time    `json:"registered_at,omitempty"`
	LastRegisteredAt *time.Time    `json:"last_registered_at,omitempty"`
	// Leader is absent without gossip, or while the shard has none.
	Leader *ShardLeader `json:"leader,omitempty"`
}

// ShardLeader is a shard's current leader as gossip reports it.
type ShardLeader struct {
	NodeID   string `json:"node_id"`
	HTTPAddr string `json:"http_addr"`
	Term     uint64 `json:"term"`
}

// ShardLoadList is GET /control/v1/shards.
type ShardLoadList struct {
	Shards []ShardLoad `json:"shards"`
}

package wire

// Shapes of a Raft group's membership API, the same on control and on
// a shard (GET/POST /internal/v1/members, DELETE /internal/v1/members/{id}):
// operators' member commands and joining nodes speak them.

// Member is one member of a Raft group.
type Member struct {
	NodeID   string `json:"node_id"`
	RaftAddr string `json:"raft_addr"`
	Voter    bool   `json:"voter"`
	Leader   bool   `json:"leader"`
	// HTTPAddr is where the member serves its API, when known: a shard
	// learns it from gossip, control from its replicated state.
	HTTPAddr string `json:"http_addr,omitempty"`
}

// MemberList is GET /internal/v1/members (and the answer to an add).
type MemberList struct {
	ShardID  string   `json:"shard_id,omitempty"` // a shard's group; empty for control's
	LeaderID string   `json:"leader_id"`          // "" while the node knows no leader
	Members  []Member `json:"members"`
}

// AddMemberRequest is the body of POST /internal/v1/members to control.
// HTTPAddr is where the node serves its API (host:port), recorded in
// control's replicated state so followers find the leader without gossip.
type AddMemberRequest struct {
	NodeID   string `json:"node_id"`
	RaftAddr string `json:"raft_addr"`
	HTTPAddr string `json:"http_addr,omitempty"`
}

// NodeStatus is GET /internal/v1/status: one member's view of its Raft
// group, the same shape on control and on a shard.
type NodeStatus struct {
	NodeID     string `json:"node_id"`
	State      string `json:"state"` // leader, follower, candidate or shutdown
	Term       uint64 `json:"term"`
	LeaderID   string `json:"leader_id,omitempty"`   // "" while no leader is known
	LeaderAddr string `json:"leader_raft,omitempty"` // the leader's Raft address
	// Ready: this node leads and has applied every entry of earlier terms.
	Ready        bool   `json:"ready"`
	AppliedIndex uint64 `json:"applied_index"` // last entry applied to the state
	CommitIndex  uint64 `json:"commit_index"`  // last entry known committed
	LastIndex    uint64 `json:"last_index"`    // last entry in the local log
	// Restores counts snapshots installed into this node's state since it
	// opened: a node that caught up from a snapshot shows one.
	Restores   uint64 `json:"restores"`
	ShardID    string `json:"shard_id,omitempty"` // a shard's group; empty for control's
	HTTPAddr   string `json:"http_addr"`
	RaftAddr   string `json:"raft_addr"`
	LeaderHTTP string `json:"leader_http,omitempty"` // where the leader serves its API, when known
	Version    string `json:"version,omitempty"`     // the node's build, where it says
}

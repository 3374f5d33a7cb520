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

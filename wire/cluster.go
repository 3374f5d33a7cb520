package wire

// ClusterHealth is GET /api/v1/cluster: the health of the shard cluster
// that holds the caller's namespace, as the node answering sees it. It
// names no addresses and nothing of other tenants. Healthy is true when
// a leader is known and a quorum of the voters is reachable.
type ClusterHealth struct {
	ShardID  string        `json:"shard_id"`
	LeaderID string        `json:"leader_id"` // "" while no leader is known
	Healthy  bool          `json:"healthy"`
	Nodes    []ClusterNode `json:"nodes"` // by id
}

// ClusterNode is one member of the shard's Raft group, with how far it
// has replicated. The node answering asks each member for its indexes; a
// member that does not answer keeps the last ones it gave that node (it
// is unreachable then, and its lag grows as the leader commits). A figure
// that is not known is absent.
type ClusterNode struct {
	ID     string `json:"id"`
	Role   string `json:"role"`   // NodeLeader, NodeFollower or NodeNonvoter
	Status string `json:"status"` // NodeHealthy or NodeUnreachable
	// AppliedIndex is the last log entry the member's Raft applied (a
	// command to its state, or a configuration change or a leader's
	// no-op).
	AppliedIndex *uint64 `json:"applied_index,omitempty"`
	// LastIndex is the last entry in the member's log, applied or not.
	LastIndex *uint64 `json:"last_index,omitempty"`
	// Lag is how many entries the member applied behind the leader's
	// commit index; absent while no leader's commit index is known.
	Lag *uint64 `json:"lag,omitempty"`
	// SinceContactMS is how many milliseconds ago the leader and the
	// member last heard from each other: when the node answering leads
	// and its heartbeats to the member fail, Raft's last contact with it;
	// otherwise the member's own report of when it last heard from its
	// leader. Absent on the leader, and while not known.
	SinceContactMS *int64 `json:"since_contact_ms,omitempty"`
}

// ClusterNode roles.
const (
	NodeLeader   = "leader"
	NodeFollower = "follower" // a voter that does not lead
	NodeNonvoter = "nonvoter" // replicates, does not vote (a node catching up)
)

// ClusterNode statuses: reachable means the answering node hears from it
// (itself, or a member of its gossip pool).
const (
	NodeHealthy     = "healthy"
	NodeUnreachable = "unreachable"
)

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

// ClusterNode is one member of the shard's Raft group.
type ClusterNode struct {
	ID     string `json:"id"`
	Role   string `json:"role"`   // NodeLeader, NodeFollower or NodeNonvoter
	Status string `json:"status"` // NodeHealthy or NodeUnreachable
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

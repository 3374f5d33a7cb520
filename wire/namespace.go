package wire

// NamespaceUsage is GET /api/v1/namespace on a shard: what the namespace
// named by ShardNamespaceHeader holds there. Jobs counts jobs in every
// state. DELETE /api/v1/namespace removes all of it (204).
type NamespaceUsage struct {
	Jobs      int64 `json:"jobs"`
	Queues    int64 `json:"queues"`
	Schedules int64 `json:"schedules"`
}

package wire

import "encoding/json"

// NamespaceUsage is GET /api/v1/namespace on a shard: what the namespace
// named by ShardNamespaceHeader holds there, and its settings there. Jobs
// counts jobs in every state. Retention is the namespace's retention as
// the shard applies it (the shortest duration string, as FormatDuration),
// or null when it sets none. DELETE /api/v1/namespace removes all of it,
// the settings included (204).
type NamespaceUsage struct {
	Jobs      int64           `json:"jobs"`
	Queues    int64           `json:"queues"`
	Schedules int64           `json:"schedules"`
	Retention json.RawMessage `json:"retention"`
}

// NamespaceSettings is the body of PUT /api/v1/namespace on a shard: the
// namespace's settings as a whole. Retention (required; a duration between
// MinRetention and MaxRetention, or null for none) is how long the
// namespace's completed and cancelled jobs are kept when their queue's
// defaults set none; it applies to jobs finishing after it. The answer is
// the NamespaceUsage.
type NamespaceSettings struct {
	Retention json.RawMessage `json:"retention"`
}

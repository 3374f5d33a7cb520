package wire

import "time"

// Metering. A shard counts each namespace's usage per UTC hour in its
// replicated state, in the same apply that changes the job; control pulls
// those hourly buckets into its ledger. A bucket carries absolute
// counters, not deltas: reading one again (a repeated or overlapping
// pull, after a shard leader change or a control restart) replaces what
// control had for it and never counts twice.

// ShardMeters are the counters of one namespace in one hour on one shard.
type ShardMeters struct {
	JobsEnqueued  int64 `json:"jobs_enqueued"`
	Executions    int64 `json:"executions"` // attempts started: the billable unit
	JobsCompleted int64 `json:"jobs_completed"`
	JobsFailed    int64 `json:"jobs_failed"` // attempts that failed (a retry or not)
	JobsDead      int64 `json:"jobs_dead"`
	// ActiveJobMs is the time attempts that ended in this hour were
	// active, in milliseconds.
	ActiveJobMs int64 `json:"active_job_ms"`
	// StorageByteMs is the namespace's stored bytes integrated over the
	// hour's time, in byte-milliseconds (storage_byte_hours × 3.6e6).
	StorageByteMs int64 `json:"storage_byte_ms"`
	// PushDeliveries are push deliveries settled by the handler's answer
	// (an ack or a failed attempt); WebhookDeliveries are webhook
	// delivery attempts. Left out when zero, so a bucket without them
	// reads and stores as before they were metered.
	PushDeliveries    int64 `json:"push_deliveries,omitempty"`
	WebhookDeliveries int64 `json:"webhook_deliveries,omitempty"`
	// AI usage workers reported (ai.go): tokens, and cost in nano-dollars
	// (exact). Left out when zero, as the deliveries are.
	AIInputTokens      int64 `json:"ai_input_tokens,omitempty"`
	AIOutputTokens     int64 `json:"ai_output_tokens,omitempty"`
	AICacheReadTokens  int64 `json:"ai_cache_read_tokens,omitempty"`
	AICacheWriteTokens int64 `json:"ai_cache_write_tokens,omitempty"`
	AICostNanos        int64 `json:"ai_cost_nanos,omitempty"`
}

// UsageBucket is one namespace's usage in one UTC hour on one shard.
type UsageBucket struct {
	Namespace string      `json:"namespace"` // tenancy.ShardNamespace form: "<tenant id>/<namespace>"
	Hour      time.Time   `json:"hour"`      // the hour's start, UTC
	Meters    ShardMeters `json:"meters"`
}

// UsagePage is a shard's GET /internal/v1/usage?since=<RFC 3339>&cursor=
// &limit=: its buckets of hours at or after since (truncated to the
// hour), ordered by hour then namespace, a page at a time (Cursor is null
// on the last page). Served to control certificates (and operators).
type UsagePage struct {
	ShardID string        `json:"shard_id"`
	Buckets []UsageBucket `json:"buckets"`
	Cursor  *string       `json:"cursor"`
	// AppliedAt is the time of the last command the answering node
	// applied (the leader's clock when it proposed it): buckets of hours
	// that ended before it no longer change, except by clock skew between
	// successive leaders, which control allows for.
	AppliedAt time.Time `json:"applied_at"`
}

// UsageMeters are a tenant's usage as GET /api/v1/usage shows it.
type UsageMeters struct {
	JobsEnqueued      int64   `json:"jobs_enqueued"`
	Executions        int64   `json:"executions"`
	JobsCompleted     int64   `json:"jobs_completed"`
	JobsFailed        int64   `json:"jobs_failed"`
	JobsDead          int64   `json:"jobs_dead"`
	ActiveJobSeconds  float64 `json:"active_job_seconds"` // from exact milliseconds
	StorageByteHours  float64 `json:"storage_byte_hours"` // from exact byte-milliseconds
	PushDeliveries    int64   `json:"push_deliveries"`
	WebhookDeliveries int64   `json:"webhook_deliveries"`
	// AI usage workers reported (ai.go); cost_usd a decimal string from
	// exact nano-dollars. Left out when zero.
	AIInputTokens      int64  `json:"ai_input_tokens,omitempty"`
	AIOutputTokens     int64  `json:"ai_output_tokens,omitempty"`
	AICacheReadTokens  int64  `json:"ai_cache_read_tokens,omitempty"`
	AICacheWriteTokens int64  `json:"ai_cache_write_tokens,omitempty"`
	AICostUSD          string `json:"ai_cost_usd,omitempty"`
	// APIRequests is counted per tenant by the gateways, so it appears in
	// the tenant's buckets and totals, not a namespace's.
	APIRequests int64 `json:"api_requests"`
}

// UsageBucketView is one bucket of GET /api/v1/usage.
type UsageBucketView struct {
	Start      time.Time   `json:"start"`
	Meters     UsageMeters `json:"meters"`
	Incomplete bool        `json:"incomplete"` // the period is still open (or control has not yet read all of it)
}

// NamespaceMeters is one namespace's buckets and totals in GET /api/v1/usage.
type NamespaceMeters struct {
	Namespace string            `json:"namespace"`
	Buckets   []UsageBucketView `json:"buckets"`
	Totals    UsageMeters       `json:"totals"`
}

// Usage is GET /api/v1/usage?from=&to=&granularity=hour|day&namespace=.
type Usage struct {
	From        time.Time         `json:"from"`
	To          time.Time         `json:"to"`
	Granularity string            `json:"granularity"`
	Namespaces  []NamespaceMeters `json:"namespaces"`
	Tenant      []UsageBucketView `json:"tenant"` // every namespace plus api_requests, per bucket
	Totals      UsageMeters       `json:"totals"`
}

// Usage limits.
const (
	MaxUsageHourBuckets = 24 * 31 // granularity=hour: at most 31 days
	MaxUsageDayBuckets  = 366     // granularity=day: at most a year
)

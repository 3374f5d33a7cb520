package wire

// Header names.
const (
	// NamespaceHeader selects the namespace a request works in (the key's
	// default namespace when absent).
	NamespaceHeader = "X-Jobbie-Namespace"
	// RequestIDHeader carries a request's id; a client may set it, every
	// answer has it.
	RequestIDHeader = "X-Request-Id"
	// LastEventIDHeader resumes an event stream after the event it names.
	LastEventIDHeader = "Last-Event-ID"

	// ShardNamespaceHeader names the namespace a request to a shard works
	// in, as tenancy.ShardNamespace(tenant id, namespace): set by the
	// gateway, never by a client.
	ShardNamespaceHeader = "X-Jobbie-Shard-Namespace"
	// QueueScopeHeader limits a request to a shard to some queues of its
	// namespace: comma-separated queue patterns ("*", a name, or a prefix
	// ending in "*"; tenancy.QueueScope), the queues the caller's role may
	// act on for this request's action. Absent: every queue; present but
	// empty: none. Set by the gateway for a key of a custom role, never by
	// a client; at most MaxQueueScopeHeader bytes.
	QueueScopeHeader = "X-Jobbie-Queue-Scope"
	// LeaderHeader carries the shard leader's HTTP address on a 503
	// no_leader (or 421) from a node that did not apply the request, so
	// the caller may retry there at once.
	LeaderHeader = "X-Jobbie-Leader"
	// ForwardedHeader marks a request a shard follower forwarded to its
	// leader (the follower's node id).
	ForwardedHeader = "X-Jobbie-Forwarded-By"
	// AppliedHeader is the leader's applied index when it answered a
	// forwarded request, so the follower can read its write.
	AppliedHeader = "X-Jobbie-Applied-Index"

	// MaxPendingJobsHeader carries the tenant plan's max_pending_jobs (per
	// namespace) on an enqueue to a shard, which refuses what would take
	// the namespace over it. Set by the gateway, never by a client; absent
	// means no limit.
	MaxPendingJobsHeader = "X-Jobbie-Max-Pending-Jobs"
	// MaxPayloadBytesHeader carries the tenant plan's max_payload_bytes
	// (from the gateway only, on every request to a shard while the plan
	// sets it): the shard refuses any stored value larger (a payload,
	// tags, a chain, a result, progress, a checkpoint), 413 naming it.
	MaxPayloadBytesHeader = "X-Jobbie-Max-Payload-Bytes"
	// ExecutionsLeftHeader carries what the tenant plan's hard monthly
	// executions cap still allows this month, as the gateway knows it (on
	// fetches, while the plan has a hard cap): a fetch/batch leases at
	// most that many.
	ExecutionsLeftHeader = "X-Jobbie-Executions-Left"
	// LeasedHeader is on a shard's answer to a fetch or fetch/batch: how
	// many jobs it leased (executions started), so a gateway counts them
	// against a hard monthly cap before the ledger has them. The gateway
	// does not pass it on.
	LeasedHeader = "X-Jobbie-Leased"
	// FairWeightHeader carries the tenant plan's weight in the shard's
	// fair admission (1 to 1000; absent means 1). Set by the gateway,
	// never by a client.
	FairWeightHeader = "X-Jobbie-Fair-Weight"
	// EventRetentionHeader carries the tenant plan's event log retention,
	// "<hours>,<events>" (event_retention_hours and
	// event_retention_events, defaults filled in), on every request to a
	// shard once the gateway knows the plan: the shard's leader keeps the
	// namespace's log to it. Set by the gateway, never by a client; absent
	// means the shard keeps what it was last told.
	EventRetentionHeader = "X-Jobbie-Event-Retention"
)

// MaxQueueScopeHeader bounds a QueueScopeHeader value: a shard reads
// request headers into a buffer that holds it beside the others.
const MaxQueueScopeHeader = 8 << 10

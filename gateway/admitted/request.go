package admitted

import (
	"sync/atomic"

	"github.com/jobbie/jobbie/tenancy"
)

// Request is an admitted request. Its strings may alias request memory
// and must not outlive the handler.
type Request struct {
	Key       *tenancy.KeyClaims
	NS        string // the namespace it works in: the key's default or X-Jobbie-Namespace
	RequestID string
	// Roles are the tenant's custom roles, for a key of one; nil for a
	// built-in role.
	Roles Roles
	// Scope is the queues a custom role may act on here, sent to the
	// shard as wire.QueueScopeHeader when limited.
	Scope Scope
	// Plan is what the tenant's plan tells shards, as limits keeps it
	// (nil: the defaults).
	Plan *atomic.Pointer[ShardHeaders]
	// CreatesJobs: the route can create jobs, so the plan's
	// max_pending_jobs goes with it to the shard.
	CreatesJobs bool
	// ExecutionsLeft, when positive, is what the plan's hard monthly
	// executions cap still allows (set on fetches by the quota check),
	// sent to the shard as wire.ExecutionsLeftHeader.
	ExecutionsLeft int64
	// Leased is how many jobs the shard's answer to a fetch says it
	// leased (wire.LeasedHeader), for the quota's own count.
	Leased int
	// SystemTrace is the traceparent of the gateway's own span of the
	// request, sent to the shard as wire.SystemTraceParentHeader; "" when
	// tracing is off or the span is not sampled.
	SystemTrace string
	// IdempotencyKey is the request's Idempotency-Key on a route that
	// takes one ("": none), checked; a create served through control
	// sends it there (a shard's route passes the header as sent).
	IdempotencyKey string
	// Audit, when set, is wire.AuditHeader's value: the shard records
	// the request's outcome in the namespace's audit log.
	Audit []byte
}

// Roles are one version of a tenant's custom roles (admission.RoleSet).
type Roles interface {
	// Permissions are role's; ok is false when the tenant has no such
	// role (any more).
	Permissions(role tenancy.Role) (ps []tenancy.Permission, ok bool)
	// Allowed reports whether role may act on queue of namespace ns
	// ("*": the namespace as a whole).
	Allowed(role tenancy.Role, ns, queue string, act tenancy.Action) (bool, error)
	// Scope is the queues role may act on for act in namespace ns.
	Scope(role tenancy.Role, ns string, act tenancy.Action) Scope
}

// Scope is a tenancy.QueueScope as the gateway sends it: Limited false
// for every queue (no header); else Header holds its patterns, "" for no
// queue.
type Scope struct {
	Header  string
	Limited bool
}

// None reports whether the scope holds no queue at all.
func (q Scope) None() bool { return q.Limited && q.Header == "" }

// ShardHeaders are the header values a tenant's plan sets on the
// gateway's requests to its shards.
type ShardHeaders struct {
	Weight     []byte // wire.FairWeightHeader's value
	MaxPending []byte // wire.MaxPendingJobsHeader's value; nil: no limit
	MaxPayload []byte // wire.MaxPayloadBytesHeader's value; nil: no limit
	// EventRetention is wire.EventRetentionHeader's value; nil while the
	// plan is not known (the shard keeps what it was last told).
	EventRetention []byte
	// AuditRetentionDays is the plan's audit_retention_days, defaults
	// filled in; 0 while the plan is not known (the logs keep what they
	// were last told).
	AuditRetentionDays int64
}

// DefaultShardHeaders are those of a tenant without a plan, or whose plan
// is not known yet.
var DefaultShardHeaders = &ShardHeaders{Weight: []byte("1")}

// ShardHeaders are the values r's plan sets.
func (r *Request) ShardHeaders() *ShardHeaders {
	if r.Plan == nil {
		return DefaultShardHeaders
	}
	if h := r.Plan.Load(); h != nil {
		return h
	}
	return DefaultShardHeaders
}

package wire

import "time"

// Plans. The operator defines plans on control; a tenant is on one plan
// at a time, a change taking effect from the next UTC hour. Prices are
// integer minor units of the plan's currency per Unit of a meter; an
// absent limit means none.

// Price is what Unit of a meter costs, in minor units.
type Price struct {
	Unit  int64 `json:"unit"`  // e.g. 1000: the price is per 1,000 executions
	Price int64 `json:"price"` // minor units per Unit
}

// PlanLimits are a plan's limits; nil is no limit.
type PlanLimits struct {
	RequestsPerSecond *int64 `json:"requests_per_second,omitempty"` // per tenant, every gateway together
	EnqueuesPerSecond *int64 `json:"enqueues_per_second,omitempty"` // jobs enqueued per second per tenant
	MaxPendingJobs    *int64 `json:"max_pending_jobs,omitempty"`    // per namespace
	MaxNamespaces     *int64 `json:"max_namespaces,omitempty"`
	MaxKeys           *int64 `json:"max_keys,omitempty"`
	MaxSchedules      *int64 `json:"max_schedules,omitempty"`
	MaxPayloadBytes   *int64 `json:"max_payload_bytes,omitempty"`
	MonthlyExecutions *int64 `json:"monthly_executions,omitempty"`
	// MonthlyExecutionsEnforcement is "hard" (refuse fetches over the
	// cap) or "soft" (an event and a metric, nothing refused).
	MonthlyExecutionsEnforcement string `json:"monthly_executions_enforcement,omitempty"`
	// EventRetentionHours and EventRetentionEvents are how much of each
	// namespace's event log (GET /api/v1/events, webhooks) its shard
	// keeps: the events of the last so many hours, and at most so many of
	// them. Unlike the limits above, absent is not unlimited but the
	// default (DefaultEventRetentionHours, DefaultEventRetentionEvents).
	EventRetentionHours  *int64 `json:"event_retention_hours,omitempty"`
	EventRetentionEvents *int64 `json:"event_retention_events,omitempty"`
	// AuditRetentionDays is how many days of audit records each
	// namespace's shard and control keep (absent: the default,
	// DefaultAuditRetentionDays; wire/audit.go).
	AuditRetentionDays *int64 `json:"audit_retention_days,omitempty"`
}

// Event log retention: a plan's bounds and defaults (PlanLimits).
const (
	DefaultEventRetentionHours  = 24
	DefaultEventRetentionEvents = 100_000
	MinEventRetentionHours      = 1
	MaxEventRetentionHours      = 30 * 24
	MinEventRetentionEvents     = 1_000
	MaxEventRetentionEvents     = 10_000_000
)

// EventRetention is what l keeps of each namespace's event log, the
// defaults filled in: hours and events.
func (l PlanLimits) EventRetention() (hours, events int64) {
	hours, events = DefaultEventRetentionHours, DefaultEventRetentionEvents
	if l.EventRetentionHours != nil {
		hours = *l.EventRetentionHours
	}
	if l.EventRetentionEvents != nil {
		events = *l.EventRetentionEvents
	}
	return hours, events
}

// Plan is GET/PUT {control}/control/v1/plans/{name} and GET /api/v1/plan.
type Plan struct {
	Name        string           `json:"name"`
	Description string           `json:"description,omitempty"`
	Currency    string           `json:"currency"`           // ISO 4217, e.g. "USD"; default "USD"
	Prices      map[string]Price `json:"prices,omitempty"`   // by meter name (UsageMeters' JSON names)
	Included    map[string]int64 `json:"included,omitempty"` // by meter name, per monthly period
	Limits      PlanLimits       `json:"limits"`
	// Weight is the tenant's share in fair admission on a shared shard
	// (1 when absent).
	Weight  int64      `json:"weight,omitempty"`
	Version uint64     `json:"version,omitempty"` // read-only: bumped by each change
	Updated *time.Time `json:"updated_at,omitempty"`
}

// PlanView is a plan as the operator API answers it (GET and PUT
// /control/v1/plans…): the latest version and the hour it applies from
// (later than now while it is pending).
type PlanView struct {
	Plan
	EffectiveFrom time.Time `json:"effective_from"`
}

// SetPlanRequest is PUT /control/v1/tenants/{id}/plan.
type SetPlanRequest struct {
	Plan string `json:"plan"`
}

// TenantPlan is a tenant's plan as the gateway reads it from control:
// the plan now in effect and, when a change is pending, the next one and
// when it takes effect.
type TenantPlan struct {
	TenantID string     `json:"tenant_id"`
	Plan     Plan       `json:"plan"`
	Since    time.Time  `json:"since"`
	Next     *Plan      `json:"next,omitempty"`
	NextFrom *time.Time `json:"next_from,omitempty"`
}

// Error codes of limits.
const (
	// CodeQuotaExceeded refuses what a plan's quota forbids (a count such
	// as max_keys, or the monthly execution cap); Retry-After is set when
	// waiting helps.
	CodeQuotaExceeded ErrorCode = "quota_exceeded"
)

// Rate limit headers (IETF draft-ietf-httpapi-ratelimit-headers).
const (
	RateLimitPolicyHeader = "RateLimit-Policy"
	RateLimitHeader       = "RateLimit"
)

package billing

import (
	"regexp"
	"time"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/wire"
)

// FreePlan is the built-in plan every tenant is on until the operator
// moves it: no prices, no limits. The operator may edit it like any other.
const FreePlan = "free"

// DefaultCurrency is a plan's currency when none is given.
const DefaultCurrency = "USD"

// Bounds that keep every product of the arithmetic far from overflow.
const (
	maxPlanUnit     = 1_000_000_000_000 // a price's unit
	maxPlanPrice    = 1_000_000_000_000 // minor units per unit
	maxPlanIncluded = 1_000_000_000_000_000
	maxPlanLimit    = 1_000_000_000_000_000
	maxPlanWeight   = 1000
	maxDescription  = 256
)

var (
	planNameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,62}$`)
	currencyRE = regexp.MustCompile(`^[A-Z]{3}$`)
)

// PlanVersion is a stored version of a plan (JSON, an on-disk format: add
// fields, never rename them): the plan as the operator put it, its
// version and when it was put, and the hour it applies from.
type PlanVersion struct {
	Plan wire.Plan `json:"plan"`
	From time.Time `json:"from"`
}

// BuiltinFree is version 1 of FreePlan, in effect since ever; it is not
// stored, so it needs no bootstrap command.
var BuiltinFree = PlanVersion{
	Plan: wire.Plan{Name: FreePlan, Description: "the default plan: no prices, no limits", Currency: DefaultCurrency, Weight: 1, Version: 1},
	From: time.Unix(0, 0).UTC(),
}

// NextHour is the start of the UTC hour after the one t is in.
func NextHour(t time.Time) time.Time { return t.UTC().Truncate(time.Hour).Add(time.Hour) }

// ValidatePlan checks a plan's fields and fills the defaults (currency);
// a bad one is a 400 naming the field.
func ValidatePlan(p *wire.Plan) error {
	if !planNameRE.MatchString(p.Name) {
		return apierr.Field("name", "plan name %q must be 1-63 lowercase letters, digits or '-', starting with a letter or digit", p.Name)
	}
	if len(p.Description) > maxDescription {
		return apierr.Field("description", "description must be at most %d bytes", maxDescription)
	}
	if p.Currency == "" {
		p.Currency = DefaultCurrency
	}
	if !currencyRE.MatchString(p.Currency) {
		return apierr.Field("currency", "currency must be an ISO 4217 code of three uppercase letters such as USD, not %q", p.Currency)
	}
	for m, pr := range p.Prices {
		f := "prices." + m
		switch {
		case !knownMeter(m):
			return apierr.Field(f, "unknown meter %q: meters are %v", m, MeterNames())
		case pr.Unit < 1 || pr.Unit > maxPlanUnit:
			return apierr.Field(f+".unit", "unit must be from 1 to %d", int64(maxPlanUnit))
		case pr.Price < 0 || pr.Price > maxPlanPrice:
			return apierr.Field(f+".price", "price must be from 0 to %d minor units", int64(maxPlanPrice))
		}
	}
	for m, n := range p.Included {
		f := "included." + m
		switch {
		case !knownMeter(m):
			return apierr.Field(f, "unknown meter %q: meters are %v", m, MeterNames())
		case n < 0 || n > maxPlanIncluded:
			return apierr.Field(f, "included must be from 0 to %d", int64(maxPlanIncluded))
		}
	}
	if err := validateLimits(&p.Limits); err != nil {
		return err
	}
	// The weight is the tenant's share in a shard's fair admission; 0 or
	// none is the default, stored as what it means.
	if p.Weight == 0 {
		p.Weight = 1
	}
	if p.Weight < 1 || p.Weight > maxPlanWeight {
		return apierr.Field("weight", "weight must be from 1 to %d (leave it out, or 0, for 1), not %d", maxPlanWeight, p.Weight)
	}
	// Read-only fields are the server's to set.
	p.Version, p.Updated = 0, nil
	return nil
}

func validateLimits(l *wire.PlanLimits) error {
	for _, f := range []struct {
		name string
		v    *int64
	}{
		{"requests_per_second", l.RequestsPerSecond}, {"enqueues_per_second", l.EnqueuesPerSecond},
		{"max_pending_jobs", l.MaxPendingJobs}, {"max_namespaces", l.MaxNamespaces}, {"max_keys", l.MaxKeys},
		{"max_schedules", l.MaxSchedules}, {"max_payload_bytes", l.MaxPayloadBytes}, {"monthly_executions", l.MonthlyExecutions},
	} {
		if f.v != nil && (*f.v < 1 || *f.v > maxPlanLimit) {
			return apierr.Field("limits."+f.name, "%s must be from 1 to %d where set (leave it out for no limit)", f.name, int64(maxPlanLimit))
		}
	}
	if err := validateEventRetention(l); err != nil {
		return err
	}
	switch l.MonthlyExecutionsEnforcement {
	case "":
		if l.MonthlyExecutions != nil {
			l.MonthlyExecutionsEnforcement = EnforcementHard
		}
	case EnforcementHard, EnforcementSoft:
		if l.MonthlyExecutions == nil {
			return apierr.Field("limits.monthly_executions_enforcement", "monthly_executions_enforcement needs monthly_executions")
		}
	default:
		return apierr.Field("limits.monthly_executions_enforcement", "monthly_executions_enforcement must be hard or soft, not %q", l.MonthlyExecutionsEnforcement)
	}
	return nil
}

// validateEventRetention checks the event log retention's bounds (an
// hour to 30 days, 1,000 to 10,000,000 events) and the audit log's (a
// day to ten years); absent is the default.
func validateEventRetention(l *wire.PlanLimits) error {
	if h := l.EventRetentionHours; h != nil && (*h < wire.MinEventRetentionHours || *h > wire.MaxEventRetentionHours) {
		return apierr.Field("limits.event_retention_hours", "event_retention_hours must be from %d to %d (leave it out for %d), not %d",
			wire.MinEventRetentionHours, wire.MaxEventRetentionHours, wire.DefaultEventRetentionHours, *h)
	}
	if n := l.EventRetentionEvents; n != nil && (*n < wire.MinEventRetentionEvents || *n > wire.MaxEventRetentionEvents) {
		return apierr.Field("limits.event_retention_events", "event_retention_events must be from %d to %d (leave it out for %d), not %d",
			wire.MinEventRetentionEvents, wire.MaxEventRetentionEvents, wire.DefaultEventRetentionEvents, *n)
	}
	if d := l.AuditRetentionDays; d != nil && (*d < wire.MinAuditRetentionDays || *d > wire.MaxAuditRetentionDays) {
		return apierr.Field("limits.audit_retention_days", "audit_retention_days must be from %d to %d (leave it out for %d), not %d",
			wire.MinAuditRetentionDays, wire.MaxAuditRetentionDays, wire.DefaultAuditRetentionDays, *d)
	}
	return nil
}

// Enforcements of the monthly execution cap.
const (
	EnforcementHard = "hard"
	EnforcementSoft = "soft"
)

// VersionAt is the version of a plan in effect in the hour starting at h:
// the newest one applying from h or earlier.
func VersionAt(vs []PlanVersion, h time.Time) (PlanVersion, bool) {
	for i := len(vs) - 1; i >= 0; i-- {
		if !vs[i].From.After(h) {
			return vs[i], true
		}
	}
	return PlanVersion{}, false
}

// HasPrices reports whether any meter of p has a non-zero price.
func HasPrices(p wire.Plan) bool {
	for _, pr := range p.Prices {
		if pr.Price > 0 {
			return true
		}
	}
	return false
}

// MeterNames are the meters a plan may price, include or invoices bill.
func MeterNames() []string {
	out := make([]string, len(meters))
	for i, m := range meters {
		out[i] = m.name
	}
	return out
}

func knownMeter(name string) bool {
	for _, m := range meters {
		if m.name == name {
			return true
		}
	}
	return false
}

// ValidPlanName reports whether name is a plan's name's shape.
func ValidPlanName(name string) bool { return planNameRE.MatchString(name) }

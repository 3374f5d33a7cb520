package control

import (
	"context"
	"fmt"
	"regexp"
	"time"

	"github.com/cockroachdb/pebble"

	"github.com/jobbie/jobbie/control/internal/layout"
	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// Plans. The operator defines them; every change (a new plan, an edit, a
// tenant moved to another plan) takes effect from the start of the next
// UTC hour, so an hour of the ledger is always priced by one plan version.
// Each edit is kept as a new version, and each tenant's plan history as
// (from hour → plan), so invoices of any month can be generated again.

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

// planVersion is a stored version of a plan (JSON, an on-disk format: add
// fields, never rename them): the plan as the operator put it, its
// version and when it was put, and the hour it applies from.
type planVersion struct {
	Plan wire.Plan `json:"plan"`
	From time.Time `json:"from"`
}

// builtinFree is version 1 of FreePlan, in effect since ever; it is not
// stored, so it needs no bootstrap command.
var builtinFree = planVersion{
	Plan: wire.Plan{Name: FreePlan, Description: "the default plan: no prices, no limits", Currency: DefaultCurrency, Weight: 1, Version: 1},
	From: time.Unix(0, 0).UTC(),
}

func planView(v planVersion) wire.PlanView { return wire.PlanView{Plan: v.Plan, EffectiveFrom: v.From} }

// nextHour is the start of the UTC hour after the one t is in.
func nextHour(t time.Time) time.Time { return t.UTC().Truncate(time.Hour).Add(time.Hour) }

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
			return apierr.Field(f, "unknown meter %q: meters are %v", m, meterNames())
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
			return apierr.Field(f, "unknown meter %q: meters are %v", m, meterNames())
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

// Enforcements of the monthly execution cap.
const (
	EnforcementHard = "hard"
	EnforcementSoft = "soft"
)

// Plans lists every plan's latest version by name, the built-in free plan
// included.
func (s *Server) Plans(ctx context.Context) ([]wire.PlanView, error) {
	return viewValue(s, func(r pebble.Reader) ([]wire.PlanView, error) {
		list, err := listPlans(r)
		return each(list, planView), err
	})
}

// Plan returns plan name's latest version (404 when unknown).
func (s *Server) Plan(ctx context.Context, name string) (wire.PlanView, error) {
	return viewValue(s, func(r pebble.Reader) (wire.PlanView, error) {
		v, err := findPlan(r, name)
		return planView(v), err
	})
}

// PutPlan creates (create) or replaces plan p, the new version applying
// from the next hour: 409 for a name taken on create, 404 for an unknown
// one on replace, 400 naming the field for a bad plan.
func (s *Server) PutPlan(ctx context.Context, p wire.Plan, create bool) (wire.PlanView, error) {
	if err := ValidatePlan(&p); err != nil {
		return wire.PlanView{}, err
	}
	v, err := propose(ctx, s, opPutPlan, &putPlanCmd{Plan: p, Create: create})
	return planView(v), err
}

// TenantPlan is tenant tid's plan now and the pending change, if any.
func (s *Server) TenantPlan(ctx context.Context, tid string) (wire.TenantPlan, error) {
	now := s.cfg.Clock.Now()
	return viewValue(s, func(r pebble.Reader) (wire.TenantPlan, error) {
		if _, err := findTenant(r, tid); err != nil {
			return wire.TenantPlan{}, err
		}
		return tenantPlanAt(r, tid, now)
	})
}

// SetTenantPlan moves tenant tid to plan name from the next hour.
func (s *Server) SetTenantPlan(ctx context.Context, tid, name string) (wire.TenantPlan, error) {
	if tenancy.ValidateTenantID(tid) != nil {
		return wire.TenantPlan{}, apierr.New(apierr.NotFound, "tenant %q not found", tid)
	}
	if !planNameRE.MatchString(name) {
		return wire.TenantPlan{}, apierr.Field("plan", "plan %q is not a plan name", name)
	}
	return propose(ctx, s, opSetTenantPlan, &setTenantPlanCmd{TenantID: tid, Plan: name})
}

func planNotFound(name string) error { return apierr.New(apierr.NotFound, "plan %q not found", name) }

// loadPlanVersions is every version of plan name, oldest first (nil for
// an unknown plan); the free plan starts with its built-in version.
func loadPlanVersions(r pebble.Reader, name string) ([]planVersion, error) {
	var out []planVersion
	if name == FreePlan {
		out = append(out, builtinFree)
	}
	err := scanJSON(r, layout.PlanVersions(name), func(_ []byte, v planVersion) { out = append(out, v) })
	return out, err
}

// findPlan is plan name's latest version, or a 404.
func findPlan(r pebble.Reader, name string) (planVersion, error) {
	if !planNameRE.MatchString(name) {
		return planVersion{}, planNotFound(name)
	}
	vs, err := loadPlanVersions(r, name)
	if err == nil && len(vs) == 0 {
		err = planNotFound(name)
	}
	if err != nil {
		return planVersion{}, err
	}
	return vs[len(vs)-1], nil
}

// listPlans is every plan's latest version, by name.
func listPlans(r pebble.Reader) ([]planVersion, error) {
	latest := map[string]planVersion{FreePlan: builtinFree}
	err := scanJSON(r, layout.Plans(), func(_ []byte, v planVersion) { latest[v.Plan.Name] = v })
	if err != nil {
		return nil, err
	}
	names := make(map[string]bool, len(latest))
	for n := range latest {
		names[n] = true
	}
	out := make([]planVersion, 0, len(latest))
	for _, n := range sortedKeys(names) {
		out = append(out, latest[n])
	}
	return out, nil
}

// versionAt is the version of a plan in effect in the hour starting at h:
// the newest one applying from h or earlier.
func versionAt(vs []planVersion, h time.Time) (planVersion, bool) {
	for i := len(vs) - 1; i >= 0; i-- {
		if !vs[i].From.After(h) {
			return vs[i], true
		}
	}
	return planVersion{}, false
}

// hasPrices reports whether any meter of p has a non-zero price.
func hasPrices(p wire.Plan) bool {
	for _, pr := range p.Prices {
		if pr.Price > 0 {
			return true
		}
	}
	return false
}

// meterNames are the meters a plan may price, include or invoices bill.
func meterNames() []string {
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

// quotaExceeded refuses what a plan's count limit forbids.
func quotaExceeded(limit string, max int64, plan string) error {
	return apierr.New(apierr.QuotaExceeded, "the %s limit of %d of plan %q is reached", limit, max, plan)
}

// errPlanHistory wraps a broken plan history: a storage fault, not input.
func errPlanHistory(tid string, err error) error {
	return fmt.Errorf("control: plan history of %s: %w", tid, err)
}

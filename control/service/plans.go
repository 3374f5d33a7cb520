package service

import (
	"context"

	"github.com/cockroachdb/pebble"

	"github.com/jobbie/jobbie/control/billing"
	"github.com/jobbie/jobbie/control/state"
	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// Plans. The operator defines them; every change (a new plan, an edit, a
// tenant moved to another plan) takes effect from the start of the next
// UTC hour, so an hour of the ledger is always priced by one plan version.
// Each edit is kept as a new version, and each tenant's plan history as
// (from hour → plan), so invoices of any month can be generated again.

func planView(v billing.PlanVersion) wire.PlanView {
	return wire.PlanView{Plan: v.Plan, EffectiveFrom: v.From}
}

// Plans lists every plan's latest version by name, the built-in free plan
// included.
func (s *Service) Plans(ctx context.Context) ([]wire.PlanView, error) {
	return ViewValue(s, func(r pebble.Reader) ([]wire.PlanView, error) {
		list, err := state.ListPlans(r)
		return state.Each(list, planView), err
	})
}

// Plan returns plan name's latest version (404 when unknown).
func (s *Service) Plan(ctx context.Context, name string) (wire.PlanView, error) {
	return ViewValue(s, func(r pebble.Reader) (wire.PlanView, error) {
		v, err := state.FindPlan(r, name)
		return planView(v), err
	})
}

// PutPlan creates (create) or replaces plan p, the new version applying
// from the next hour: 409 for a name taken on create, 404 for an unknown
// one on replace, 400 naming the field for a bad plan.
func (s *Service) PutPlan(ctx context.Context, p wire.Plan, create bool) (wire.PlanView, error) {
	if err := billing.ValidatePlan(&p); err != nil {
		return wire.PlanView{}, err
	}
	v, err := propose(ctx, s, state.OpPutPlan, &state.PutPlanCmd{Plan: p, Create: create})
	return planView(v), err
}

// TenantPlan is tenant tid's plan now and the pending change, if any.
func (s *Service) TenantPlan(ctx context.Context, tid string) (wire.TenantPlan, error) {
	now := s.cfg.Clock.Now()
	return ViewValue(s, func(r pebble.Reader) (wire.TenantPlan, error) {
		if _, err := state.FindTenant(r, tid); err != nil {
			return wire.TenantPlan{}, err
		}
		return state.TenantPlanAt(r, tid, now)
	})
}

// SetTenantPlan moves tenant tid to plan name from the next hour.
func (s *Service) SetTenantPlan(ctx context.Context, tid, name string) (wire.TenantPlan, error) {
	if tenancy.ValidateTenantID(tid) != nil {
		return wire.TenantPlan{}, apierr.New(apierr.NotFound, "tenant %q not found", tid)
	}
	if !billing.ValidPlanName(name) {
		return wire.TenantPlan{}, apierr.Field("plan", "plan %q is not a plan name", name)
	}
	return propose(ctx, s, state.OpSetTenantPlan, &state.SetTenantPlanCmd{TenantID: tid, Plan: name})
}

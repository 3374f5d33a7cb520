package service

import (
	"context"

	"github.com/cockroachdb/pebble"

	"github.com/jobbie/jobbie/control/state"
	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/tenancy"
)

// CreateTenant creates a tenant with its default namespace and an owner
// key, whose token is in the result and nowhere else. A taken name is an
// apierr Conflict; a bad one a BadRequest naming field "name".
func (s *Service) CreateTenant(ctx context.Context, name string) (state.CreateTenantResult, error) {
	return s.CreateTenantOnPlan(ctx, name, "")
}

// CreateTenantOnPlan is CreateTenant with the tenant on plan from its
// creation ("" is the free plan); a plan with no version in effect yet
// is a BadRequest naming field "plan".
func (s *Service) CreateTenantOnPlan(ctx context.Context, name, plan string) (state.CreateTenantResult, error) {
	if err := tenancy.ValidateTenantName(name); err != nil {
		return state.CreateTenantResult{}, apierr.Field("name", "%v", err)
	}
	cmd := state.CreateTenantCmd{ID: NewID("t_"), Name: name, OwnerKeyID: NewID("key_"), Plan: plan, Placement: s.Placement()}
	res, err := propose(ctx, s, state.OpCreateTenant, &cmd)
	if err != nil {
		return state.CreateTenantResult{}, err
	}
	tok, err := s.Sign(res.Owner)
	if err != nil {
		return state.CreateTenantResult{}, err
	}
	return state.CreateTenantResult{Tenant: res.Tenant, Namespace: tenancy.DefaultNamespace, OwnerKey: tok}, nil
}

// Tenants lists every tenant, oldest first.
func (s *Service) Tenants(ctx context.Context) ([]state.Tenant, error) {
	return ViewValue(s, state.ListTenants)
}

// TenantByName returns a tenant by name (apierr NotFound if unknown).
func (s *Service) TenantByName(ctx context.Context, name string) (state.Tenant, error) {
	return ViewValue(s, func(r pebble.Reader) (state.Tenant, error) { return state.LoadTenantByName(r, name) })
}

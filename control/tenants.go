package control

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
func (s *Server) CreateTenant(ctx context.Context, name string) (state.CreateTenantResult, error) {
	return s.CreateTenantOnPlan(ctx, name, "")
}

// CreateTenantOnPlan is CreateTenant with the tenant on plan from its
// creation ("" is the free plan); a plan with no version in effect yet
// is a BadRequest naming field "plan".
func (s *Server) CreateTenantOnPlan(ctx context.Context, name, plan string) (state.CreateTenantResult, error) {
	if err := tenancy.ValidateTenantName(name); err != nil {
		return state.CreateTenantResult{}, apierr.Field("name", "%v", err)
	}
	cmd := state.CreateTenantCmd{ID: newID("t_"), Name: name, OwnerKeyID: newID("key_"), Plan: plan, Placement: s.placement()}
	res, err := propose(ctx, s, state.OpCreateTenant, &cmd)
	if err != nil {
		return state.CreateTenantResult{}, err
	}
	tok, err := s.sign(res.Owner)
	if err != nil {
		return state.CreateTenantResult{}, err
	}
	return state.CreateTenantResult{Tenant: res.Tenant, Namespace: tenancy.DefaultNamespace, OwnerKey: tok}, nil
}

// Tenants lists every tenant, oldest first.
func (s *Server) Tenants(ctx context.Context) ([]state.Tenant, error) {
	return viewValue(s, state.ListTenants)
}

// TenantByName returns a tenant by name (apierr NotFound if unknown).
func (s *Server) TenantByName(ctx context.Context, name string) (state.Tenant, error) {
	return viewValue(s, func(r pebble.Reader) (state.Tenant, error) { return state.LoadTenantByName(r, name) })
}

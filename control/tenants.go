package control

import (
	"context"

	"github.com/cockroachdb/pebble"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/tenancy"
)

// CreateTenant creates a tenant with its default namespace and an owner
// key, whose token is in the result and nowhere else. A taken name is an
// apierr Conflict; a bad one a BadRequest naming field "name".
func (s *Server) CreateTenant(ctx context.Context, name string) (CreateTenantResult, error) {
	return s.CreateTenantOnPlan(ctx, name, "")
}

// CreateTenantOnPlan is CreateTenant with the tenant on plan from its
// creation ("" is the free plan); a plan with no version in effect yet
// is a BadRequest naming field "plan".
func (s *Server) CreateTenantOnPlan(ctx context.Context, name, plan string) (CreateTenantResult, error) {
	if err := tenancy.ValidateTenantName(name); err != nil {
		return CreateTenantResult{}, apierr.Field("name", "%v", err)
	}
	cmd := createTenantCmd{ID: newID("t_"), Name: name, OwnerKeyID: newID("key_"), Plan: plan, placement: s.placement()}
	res, err := propose(ctx, s, opCreateTenant, &cmd)
	if err != nil {
		return CreateTenantResult{}, err
	}
	tok, err := s.sign(res.Owner)
	if err != nil {
		return CreateTenantResult{}, err
	}
	return CreateTenantResult{Tenant: res.Tenant, Namespace: tenancy.DefaultNamespace, OwnerKey: tok}, nil
}

// Tenants lists every tenant, oldest first.
func (s *Server) Tenants(ctx context.Context) ([]Tenant, error) {
	return viewValue(s, listTenants)
}

// TenantByName returns a tenant by name (apierr NotFound if unknown).
func (s *Server) TenantByName(ctx context.Context, name string) (Tenant, error) {
	return viewValue(s, func(r pebble.Reader) (Tenant, error) { return loadTenantByName(r, name) })
}

// findTenant loads tenant tid, treating a malformed id as an unknown one.
func findTenant(r pebble.Reader, tid string) (Tenant, error) {
	if tenancy.ValidateTenantID(tid) != nil {
		return Tenant{}, apierr.New(apierr.NotFound, "tenant %q not found", tid)
	}
	return loadTenant(r, tid)
}

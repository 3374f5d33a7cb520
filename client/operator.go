package client

import (
	"context"

	"github.com/jobbie/jobbie/wire"
)

// Operator calls are made to the control plane's URL with the operator key:
//
//	op := client.New(controlURL, operatorKey)
//	t, err := op.CreateTenant(ctx, "acme")

// Tenant is a customer account.
type Tenant = wire.Tenant

// CreatedTenant is a new tenant with its default namespace and an owner key.
type CreatedTenant = wire.CreatedTenant

// CreateTenant provisions a tenant (operator only).
func (c *Client) CreateTenant(ctx context.Context, name string) (*CreatedTenant, error) {
	return c.CreateTenantOnPlan(ctx, name, "")
}

// CreateTenantOnPlan creates a tenant on plan from its creation ("" is
// the free plan; operator only).
func (c *Client) CreateTenantOnPlan(ctx context.Context, name, plan string) (*CreatedTenant, error) {
	var out CreatedTenant
	if _, err := c.do(ctx, "POST", "/control/v1/tenants", wire.CreateTenantRequest{Name: name, Plan: plan}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ListTenants lists every tenant (operator only).
func (c *Client) ListTenants(ctx context.Context) ([]Tenant, error) {
	var out wire.TenantList
	if _, err := c.do(ctx, "GET", "/control/v1/tenants", nil, &out); err != nil {
		return nil, err
	}
	return out.Tenants, nil
}

package client

import (
	"context"
	"time"
)

// Operator calls are made to the control plane's URL with the operator key:
//
//	op := client.New(controlURL, operatorKey)
//	t, err := op.CreateTenant(ctx, "acme")

// Tenant is a customer account.
type Tenant struct {
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	CreatedAt time.Time `json:"created_at"`
}

// CreatedTenant is a new tenant with its default namespace and an owner key.
type CreatedTenant struct {
	Tenant    Tenant `json:"tenant"`
	Namespace string `json:"namespace"`
	OwnerKey  string `json:"owner_key"`
}

// CreateTenant provisions a tenant (operator only).
func (c *Client) CreateTenant(ctx context.Context, name string) (*CreatedTenant, error) {
	in := struct {
		Name string `json:"name"`
	}{name}
	var out CreatedTenant
	if _, err := c.do(ctx, "POST", "/control/v1/tenants", in, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ListTenants lists every tenant (operator only).
func (c *Client) ListTenants(ctx context.Context) ([]Tenant, error) {
	var out struct {
		Tenants []Tenant `json:"tenants"`
	}
	if _, err := c.do(ctx, "GET", "/control/v1/tenants", nil, &out); err != nil {
		return nil, err
	}
	return out.Tenants, nil
}

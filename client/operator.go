package client

import (
	"context"
	"time"

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

// ShardLoad is a shard cluster control places namespaces on, with its
// load, members and leader.
type ShardLoad = wire.ShardLoad

// ListShardLoads lists every shard cluster control knows, static or
// registered, with how many namespaces each holds (operator only).
func (c *Client) ListShardLoads(ctx context.Context) ([]ShardLoad, error) {
	var out wire.ShardLoadList
	if _, err := c.do(ctx, "GET", "/control/v1/shards", nil, &out); err != nil {
		return nil, err
	}
	return out.Shards, nil
}

// SigningKey is a key that signs API keys (never its private half).
type SigningKey = wire.SigningKey

// RotatedSigningKeys answers a rotation: every signing key after it, and
// the calling operator key signed again by the new key.
type RotatedSigningKeys = wire.RotatedSigningKeys

// ListSigningKeys lists the keys that sign API keys, oldest first
// (operator only).
func (c *Client) ListSigningKeys(ctx context.Context) ([]SigningKey, error) {
	var out wire.SigningKeyList
	if _, err := c.do(ctx, "GET", "/control/v1/signing-keys", nil, &out); err != nil {
		return nil, err
	}
	return out.SigningKeys, nil
}

// RotateSigningKey makes a new key sign API keys; the replaced one goes
// on verifying the keys it signed for retireAfter (nil: the control
// plane's default, a day; zero: it retires at once). Operator only; the
// answer holds the caller's operator key signed again, to use once the
// old key retires.
func (c *Client) RotateSigningKey(ctx context.Context, retireAfter *time.Duration) (*RotatedSigningKeys, error) {
	var req wire.RotateSigningKeyRequest
	if retireAfter != nil {
		req.RetireAfter = wire.Duration(*retireAfter)
		if *retireAfter == 0 {
			req.RetireAfter = []byte("0")
		}
	}
	var out RotatedSigningKeys
	if _, err := c.do(ctx, "POST", "/control/v1/signing-keys/rotate", req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

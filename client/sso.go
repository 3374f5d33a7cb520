package client

import (
	"context"

	"github.com/jobbie/jobbie/wire"
)

// Console sign-in through the tenant's identity provider
// (docs/api/sso.md): the tenant's OpenID Connect configuration, the
// owner's alone (sso.manage).

const ssoPath = "/api/v1/sso"

// SSOConfig is the tenant's configuration as the server answers it:
// never the client secret (ClientSecretSet says one is kept).
type SSOConfig = wire.SSOConfig

// SSORequest is a whole configuration to set. ClientSecret is
// write-only: required the first time, "" keeps the one set before.
type SSORequest = wire.SSORequest

// SSOGroupRole maps a group of the provider to a role.
type SSOGroupRole = wire.SSOGroupRole

// GetSSO returns the tenant's configuration; an error IsNotFound says
// is one while it has none.
func (c *Client) GetSSO(ctx context.Context) (*SSOConfig, error) {
	var out SSOConfig
	if _, err := c.do(ctx, "GET", ssoPath, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// PutSSO sets the whole configuration and returns it as kept. A bad
// field is a 400 whose Field names it (group_roles[1].role), and
// nothing changes.
func (c *Client) PutSSO(ctx context.Context, req SSORequest) (*SSOConfig, error) {
	var out SSOConfig
	if _, err := c.do(ctx, "PUT", ssoPath, req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// DeleteSSO ends sign-in through the provider, and the sessions it let
// in; an error IsNotFound says is one when the tenant has none.
func (c *Client) DeleteSSO(ctx context.Context) error {
	_, err := c.do(ctx, "DELETE", ssoPath, nil, nil)
	return err
}

package client

import (
	"context"
	"net/url"

	"github.com/jobbie/jobbie/wire"
)

// CodeRoleInUse is the code of DeleteRole's refusal while live keys
// (unrevoked, unexpired) carry the role; the message counts them.
const CodeRoleInUse = string(wire.CodeRoleInUse)

// Permission grants Actions on the queues matching Queues in the
// namespaces matching Namespaces; each pattern is "*", a name, or a
// prefix ending in "*" ("emails.*").
type Permission = wire.Permission

// Role is a role: a built-in one (Builtin, read-only, with no times) or
// one of the tenant's custom roles, the union of its Permissions.
type Role = wire.Role

func rolePath(name string) string { return "/api/v1/roles/" + url.PathEscape(name) }

// ListRoles lists the built-in roles, then the tenant's custom roles by
// name.
func (c *Client) ListRoles(ctx context.Context) ([]Role, error) {
	var out wire.RoleList
	if _, err := c.do(ctx, "GET", "/api/v1/roles", nil, &out); err != nil {
		return nil, err
	}
	return out.Roles, nil
}

// GetRole returns a role by name, built in or custom; another tenant's
// is not found.
func (c *Client) GetRole(ctx context.Context, name string) (*Role, error) {
	var out Role
	if _, err := c.do(ctx, "GET", rolePath(name), nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// CreateRole creates custom role r (its Name, Description and
// Permissions; the rest is ignored). The calling key must hold every
// permission it grants.
func (c *Client) CreateRole(ctx context.Context, r Role) (*Role, error) {
	var out Role
	in := wire.RoleRequest{Name: r.Name, Description: r.Description, Permissions: r.Permissions}
	if _, err := c.do(ctx, "POST", "/api/v1/roles", in, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// UpdateRole replaces the description and permissions of custom role
// r.Name (PUT: what is left out is cleared). Keys of the role get its new
// permissions on their next request.
func (c *Client) UpdateRole(ctx context.Context, r Role) (*Role, error) {
	var out Role
	in := wire.RoleRequest{Description: r.Description, Permissions: r.Permissions}
	if _, err := c.do(ctx, "PUT", rolePath(r.Name), in, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// DeleteRole deletes a custom role; while live keys carry it, the error's
// code is CodeRoleInUse.
func (c *Client) DeleteRole(ctx context.Context, name string) error {
	_, err := c.do(ctx, "DELETE", rolePath(name), nil, nil)
	return err
}

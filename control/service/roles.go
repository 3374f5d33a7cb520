package service

import (
	"context"
	"slices"
	"strings"

	"github.com/cockroachdb/pebble"

	"github.com/jobbie/jobbie/control/state"
	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// Custom roles of a tenant. Control checks their shapes and keeps them;
// the gateway decides who may define which (a key never grants more than
// it holds) and enforces them. Each change moves the tenant's roles
// version, which the revocation list carries to every gateway.

// RoleRequest creates or replaces a custom role.
type RoleRequest = wire.RoleRequest

// Roles lists tenant tid's custom roles by name, with their version.
func (s *Service) Roles(ctx context.Context, tid string) ([]state.CustomRole, uint64, error) {
	var version uint64
	roles, err := ViewValue(s, func(r pebble.Reader) ([]state.CustomRole, error) {
		if _, err := state.FindTenant(r, tid); err != nil {
			return nil, err
		}
		var err error
		if version, err = state.RolesVersion(r, tid); err != nil {
			return nil, err
		}
		return state.ListRoles(r, tid)
	})
	return roles, version, err
}

// Role returns custom role name of tenant tid: 404 for an unknown one, a
// malformed name, a built-in role's, or another tenant's.
func (s *Service) Role(ctx context.Context, tid, name string) (state.CustomRole, error) {
	return ViewValue(s, func(r pebble.Reader) (state.CustomRole, error) {
		if _, err := state.FindTenant(r, tid); err != nil {
			return state.CustomRole{}, err
		}
		if tenancy.ValidateRoleName(name) != nil {
			return state.CustomRole{}, state.RoleNotFound(name)
		}
		role, ok, err := state.LoadRole(r, tid, name)
		if err == nil && !ok {
			err = state.RoleNotFound(name)
		}
		return role, err
	})
}

// CreateRole creates custom role req.Name of tenant tid: a bad field is
// a 400 naming it, a name taken a 409.
func (s *Service) CreateRole(ctx context.Context, tid string, req RoleRequest) (state.CustomRole, uint64, error) {
	if tenancy.ValidateTenantID(tid) != nil {
		return state.CustomRole{}, 0, apierr.New(apierr.NotFound, "tenant %q not found", tid)
	}
	if err := apierr.Invalid(tenancy.ValidateRoleName(req.Name)); err != nil {
		return state.CustomRole{}, 0, err
	}
	cmd, err := roleCommand(tid, req.Name, req)
	if err != nil {
		return state.CustomRole{}, 0, err
	}
	cmd.Create = true
	res, err := propose(ctx, s, state.OpPutRole, &cmd)
	return res.Role, res.Version, err
}

// UpdateRole replaces custom role name of tenant tid with req (its
// description and permissions; req.Name, when set, must be name): 404
// for a role that does not exist, 409 for a built-in one.
func (s *Service) UpdateRole(ctx context.Context, tid, name string, req RoleRequest) (state.CustomRole, uint64, error) {
	if err := s.knownRoleName(tid, name); err != nil {
		return state.CustomRole{}, 0, err
	}
	if req.Name != "" && req.Name != name {
		return state.CustomRole{}, 0, apierr.Field("name", "name %q is not the role's, %q: a role cannot be renamed", req.Name, name)
	}
	cmd, err := roleCommand(tid, name, req)
	if err != nil {
		return state.CustomRole{}, 0, err
	}
	res, err := propose(ctx, s, state.OpPutRole, &cmd)
	return res.Role, res.Version, err
}

// DeleteRole deletes custom role name of tenant tid and returns the
// tenant's roles version after it: 409 role_in_use while live keys carry
// it, 409 for a built-in role, 404 for an unknown one.
func (s *Service) DeleteRole(ctx context.Context, tid, name string) (uint64, error) {
	if err := s.knownRoleName(tid, name); err != nil {
		return 0, err
	}
	return propose(ctx, s, state.OpDeleteRole, &state.DeleteRoleCmd{TenantID: tid, Name: name})
}

// knownRoleName refuses what cannot name a tenant's custom role.
func (s *Service) knownRoleName(tid, name string) error {
	switch {
	case tenancy.ValidateTenantID(tid) != nil:
		return apierr.New(apierr.NotFound, "tenant %q not found", tid)
	case tenancy.IsBuiltinRole(name):
		return builtinRoleError(name)
	case tenancy.ValidateRoleName(name) != nil:
		return state.RoleNotFound(name)
	}
	return nil
}

func builtinRoleError(name string) error {
	return apierr.New(apierr.Conflict, "role %q is built in: it cannot be changed or deleted (define a custom role instead)", name)
}

// roleCommand checks a role's description and permissions.
func roleCommand(tid, name string, req RoleRequest) (state.PutRoleCmd, error) {
	if err := checkDescription(req.Description); err != nil {
		return state.PutRoleCmd{}, err
	}
	perms := make([]tenancy.Permission, len(req.Permissions))
	for i, p := range req.Permissions {
		perms[i] = tenancy.Permission(p)
	}
	if err := apierr.Invalid(tenancy.ValidatePermissions(perms)); err != nil {
		return state.PutRoleCmd{}, err
	}
	if err := checkQueuePatterns(perms); err != nil {
		return state.PutRoleCmd{}, err
	}
	return state.PutRoleCmd{TenantID: tid, Name: name, Description: req.Description, Permissions: perms}, nil
}

// checkQueuePatterns bounds a role's distinct queue patterns, which a
// request's queue scope (wire.QueueScopeHeader) may carry all of.
func checkQueuePatterns(perms []tenancy.Permission) error {
	var all []string
	for _, p := range perms {
		all = append(all, p.Queues...)
	}
	slices.Sort(all)
	if n := len(strings.Join(slices.Compact(all), ",")); n > wire.MaxRoleQueuePatterns {
		return apierr.Field("permissions", "the role's distinct queue patterns take %d bytes joined by commas, over the limit of %d", n, wire.MaxRoleQueuePatterns)
	}
	return nil
}

// checkKeyRole parses a new key's role: a built-in role, or the name of
// a custom role (the create_key command checks the tenant has it).
func checkKeyRole(s string) (tenancy.Role, error) {
	if r, err := tenancy.ParseRole(s); err == nil {
		return r, nil
	}
	if tenancy.IsCustomRole(tenancy.Role(s)) {
		return tenancy.Role(s), nil
	}
	return "", apierr.Field("role", "role %q is neither a built-in role (owner, admin, developer, producer, worker, viewer, billing) nor a custom role's name", s)
}

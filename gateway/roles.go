package gateway

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// Roles through the gateway: key.read to look, key.manage to define,
// change or delete (the roles decide what keys may do). The built-in
// roles are listed with the tenant's custom roles, read-only. A caller
// defines, changes or deletes only roles within what it holds
// (grant.go); a change applies to this gateway's next request at once
// (roleCache.changed).

// builtinDescriptions describe the built-in roles.
var builtinDescriptions = map[tenancy.Role]string{
	tenancy.RoleOwner:     "Everything in the tenant, including keys of every role",
	tenancy.RoleAdmin:     "Everything in the tenant, including keys of every role but owner",
	tenancy.RoleDeveloper: "Jobs, queues and schedules; reads namespaces",
	tenancy.RoleProducer:  "Enqueues and reads jobs; reads queues",
	tenancy.RoleWorker:    "Fetches and works jobs; reads jobs and queues",
	tenancy.RoleViewer:    "Reads jobs, queues, schedules and namespaces",
	tenancy.RoleBilling:   "Reads usage and invoices",
}

// builtinRole is a built-in role as the API shows it.
func builtinRole(r tenancy.Role) wire.Role {
	ps := tenancy.BuiltinPermissions(r)
	out := wire.Role{Name: string(r), Description: builtinDescriptions[r], Permissions: make([]wire.Permission, len(ps)), Builtin: true}
	for i, p := range ps {
		out.Permissions[i] = wire.Permission(p)
	}
	return out
}

// permissionsOf are a role's permissions in tenancy's terms.
func permissionsOf(role wire.Role) []tenancy.Permission {
	ps := make([]tenancy.Permission, len(role.Permissions))
	for i, p := range role.Permissions {
		ps[i] = tenancy.Permission(p)
	}
	return ps
}

func rolePath(r *call, name string) string {
	return tenantPath(r.key.TenantID, "/roles/"+url.PathEscape(name))
}

// fetchRole fetches one custom role from control: a role the tenant does
// not have is 404.
func (s *Server) fetchRole(r *call, name string) (wire.Role, error) {
	var role wire.Role
	err := s.controlJSON(r, http.MethodGet, rolePath(r, name), nil, http.StatusOK, &role)
	return role, err
}

// listRoles shows the built-in roles, then the tenant's custom roles.
func (s *Server) listRoles(c *fiber.Ctx, r *call) error {
	var custom wire.TenantRoles
	if err := s.controlJSON(r, http.MethodGet, tenantPath(r.key.TenantID, "/roles"), nil, http.StatusOK, &custom); err != nil {
		return err
	}
	out := wire.RoleList{Roles: make([]wire.Role, 0, len(tenancy.TenantRoles)+len(custom.Roles))}
	for _, b := range tenancy.TenantRoles {
		out.Roles = append(out.Roles, builtinRole(b))
	}
	out.Roles = append(out.Roles, custom.Roles...)
	return c.JSON(out)
}

// namedRole is the role name a /roles/{name} request is about: a
// malformed name is a 400 naming it. builtin reports a built-in role.
func namedRole(c *fiber.Ctx) (name string, builtin bool, err error) {
	name = strings.Clone(c.Params("name")) // params alias request memory
	if tenancy.IsBuiltinRole(name) && name != string(tenancy.RoleOperator) {
		return name, true, nil
	}
	if err := apierr.Invalid(tenancy.ValidateRoleName(name)); err != nil {
		return "", false, err
	}
	return name, false, nil
}

func readOnly(name string) error {
	return apierr.New(apierr.Conflict, "role %q is built in and read-only: define a custom role instead", name)
}

func (s *Server) showRole(c *fiber.Ctx, r *call) error {
	name, builtin, err := namedRole(c)
	if err != nil {
		return err
	}
	if builtin {
		return c.JSON(builtinRole(tenancy.Role(name)))
	}
	role, err := s.fetchRole(r, name)
	if err != nil {
		return err
	}
	return c.JSON(role)
}

// checkRole checks a role's permissions for a 400 naming the field at
// fault (control checks the rest), and that the caller holds them.
func (s *Server) checkRole(r *call, in wire.RoleRequest, what string) error {
	ps := make([]tenancy.Permission, len(in.Permissions))
	for i, p := range in.Permissions {
		ps[i] = tenancy.Permission(p)
	}
	if err := apierr.Invalid(tenancy.ValidatePermissions(ps)); err != nil {
		return err
	}
	return s.mayGrant(r, ps, what)
}

func (s *Server) createRole(c *fiber.Ctx, r *call) error {
	var in wire.RoleRequest
	if err := decodeBody(c, &in); err != nil {
		return err
	}
	if err := apierr.Invalid(tenancy.ValidateRoleName(in.Name)); err != nil {
		return err
	}
	if err := s.checkRole(r, in, "define role "+in.Name); err != nil {
		return err
	}
	var made wire.RoleChanged
	if err := s.controlJSON(r, http.MethodPost, tenantPath(r.key.TenantID, "/roles"), in, http.StatusCreated, &made); err != nil {
		return err
	}
	s.roles.changed(r.key.TenantID, made.RolesVersion)
	return c.Status(fiber.StatusCreated).JSON(made.Role)
}

// updateRole replaces a custom role the caller could have defined, with
// one it may define.
func (s *Server) updateRole(c *fiber.Ctx, r *call) error {
	name, builtin, err := namedRole(c)
	if err != nil {
		return err
	}
	if builtin {
		return readOnly(name)
	}
	var in wire.RoleRequest
	if err := decodeBody(c, &in); err != nil {
		return err
	}
	if in.Name != "" && in.Name != name {
		return apierr.Field("name", "name %q is not the role's, %q: a role cannot be renamed", in.Name, name)
	}
	cur, err := s.fetchRole(r, name)
	if err != nil {
		return err
	}
	if err := s.mayGrant(r, permissionsOf(cur), "change role "+name+" as it is"); err != nil {
		return err
	}
	if err := s.checkRole(r, in, "change role "+name); err != nil {
		return err
	}
	var made wire.RoleChanged
	if err := s.controlJSON(r, http.MethodPut, rolePath(r, name), in, http.StatusOK, &made); err != nil {
		return err
	}
	s.roles.changed(r.key.TenantID, made.RolesVersion)
	return c.JSON(made.Role)
}

// deleteRole deletes a custom role the caller could have defined; control
// refuses one live keys carry (409 role_in_use).
func (s *Server) deleteRole(c *fiber.Ctx, r *call) error {
	name, builtin, err := namedRole(c)
	if err != nil {
		return err
	}
	if builtin {
		return readOnly(name)
	}
	cur, err := s.fetchRole(r, name)
	if err != nil {
		return err
	}
	if err := s.mayGrant(r, permissionsOf(cur), "delete role "+name); err != nil {
		return err
	}
	var gone wire.RolesVersion
	if err := s.controlJSON(r, http.MethodDelete, rolePath(r, name), nil, http.StatusOK, &gone); err != nil {
		return err
	}
	s.roles.changed(r.key.TenantID, gone.Version)
	return c.SendStatus(fiber.StatusNoContent)
}

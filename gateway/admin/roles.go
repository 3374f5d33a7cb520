package admin

import (
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/jobbie/jobbie/gateway/admission"
	"github.com/jobbie/jobbie/gateway/admitted"
	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// Roles through the gateway: key.read to look, key.manage to define,
// change or delete (the roles decide what keys may do). The built-in
// roles are listed with the tenant's custom roles, read-only. A caller
// defines, changes or deletes only roles within what it holds
// (admission's grant.go); a change applies to this gateway's next request
// at once (admission.Gate.RolesChanged).

// builtinDescriptions describe the built-in roles.
var builtinDescriptions = map[tenancy.Role]string{
	tenancy.RoleOwner:     "Everything in the tenant, including keys of every role",
	tenancy.RoleAdmin:     "Everything in the tenant but its SSO configuration, including keys of every role but owner",
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

// fetchRole fetches one custom role from control: a role the tenant does
// not have is 404.
func (a *Admin) fetchRole(r *admitted.Request, name string) (wire.Role, error) {
	role, err := a.control.Role(a.ctx, r.RequestID, r.Key.TenantID, name)
	return role, a.tell(r, err)
}

// ListRoles shows the built-in roles, then the tenant's custom roles.
func (a *Admin) ListRoles(c *fiber.Ctx, r *admitted.Request) error {
	custom, err := a.control.TenantRoles(a.ctx, r.RequestID, r.Key.TenantID)
	if err != nil {
		return a.tell(r, err)
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

func (a *Admin) ShowRole(c *fiber.Ctx, r *admitted.Request) error {
	name, builtin, err := namedRole(c)
	if err != nil {
		return err
	}
	if builtin {
		return c.JSON(builtinRole(tenancy.Role(name)))
	}
	role, err := a.fetchRole(r, name)
	if err != nil {
		return err
	}
	return c.JSON(role)
}

// checkRole checks a role's permissions for a 400 naming the field at
// fault (control checks the rest), and that the caller holds them.
func checkRole(r *admitted.Request, in wire.RoleRequest, what string) error {
	ps := make([]tenancy.Permission, len(in.Permissions))
	for i, p := range in.Permissions {
		ps[i] = tenancy.Permission(p)
	}
	if err := apierr.Invalid(tenancy.ValidatePermissions(ps)); err != nil {
		return err
	}
	return admission.MayGrant(r, ps, what)
}

func (a *Admin) CreateRole(c *fiber.Ctx, r *admitted.Request) error {
	var in wire.RoleRequest
	if err := decodeBody(c, &in); err != nil {
		return err
	}
	if err := apierr.Invalid(tenancy.ValidateRoleName(in.Name)); err != nil {
		return err
	}
	if err := checkRole(r, in, "define role "+in.Name); err != nil {
		return err
	}
	ctx, idem := a.keyed(r)
	made, err := a.control.CreateRole(ctx, r.RequestID, r.Key.TenantID, in)
	if err != nil {
		return a.tell(r, err)
	}
	a.gate.RolesChanged(r.Key.TenantID, made.RolesVersion)
	return created(c, idem, fiber.StatusCreated, made.Role)
}

// UpdateRole replaces a custom role the caller could have defined, with
// one it may define.
func (a *Admin) UpdateRole(c *fiber.Ctx, r *admitted.Request) error {
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
	cur, err := a.fetchRole(r, name)
	if err != nil {
		return err
	}
	if err := admission.MayGrant(r, admission.PermissionsOf(cur), "change role "+name+" as it is"); err != nil {
		return err
	}
	if err := checkRole(r, in, "change role "+name); err != nil {
		return err
	}
	made, err := a.control.UpdateRole(a.ctx, r.RequestID, r.Key.TenantID, name, in)
	if err != nil {
		return a.tell(r, err)
	}
	a.gate.RolesChanged(r.Key.TenantID, made.RolesVersion)
	return c.JSON(made.Role)
}

// DeleteRole deletes a custom role the caller could have defined; control
// refuses one live keys carry (409 role_in_use).
func (a *Admin) DeleteRole(c *fiber.Ctx, r *admitted.Request) error {
	name, builtin, err := namedRole(c)
	if err != nil {
		return err
	}
	if builtin {
		return readOnly(name)
	}
	cur, err := a.fetchRole(r, name)
	if err != nil {
		return err
	}
	if err := admission.MayGrant(r, admission.PermissionsOf(cur), "delete role "+name); err != nil {
		return err
	}
	gone, err := a.control.DeleteRole(a.ctx, r.RequestID, r.Key.TenantID, name)
	if err != nil {
		return a.tell(r, err)
	}
	a.gate.RolesChanged(r.Key.TenantID, gone.Version)
	return c.SendStatus(fiber.StatusNoContent)
}

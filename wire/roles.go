package wire

import "time"

// Roles: GET/POST /api/v1/roles, GET/PUT/DELETE /api/v1/roles/{name}. A
// role is a set of permissions; a key carries one role, built in or one
// of its tenant's custom roles, by name.

// Permission grants Actions on the queues matching Queues in the
// namespaces matching Namespaces. Every pattern is "*" (all), an exact
// name, or a prefix ending in "*" ("emails.*" matches "emails.send", not
// "emails"; "job.*" every job action). A permission whose queues are not
// "*" grants nothing about a namespace as a whole (its keys, roles,
// settings): those need queues ["*"].
type Permission struct {
	Actions    []string `json:"actions"`
	Namespaces []string `json:"namespaces"`
	Queues     []string `json:"queues"`
}

// Role is a role as GET /api/v1/roles shows it. Built-in roles (Builtin
// true: owner, admin, developer, producer, worker, viewer, billing) are
// read-only and have no times; a custom role holds the union of its
// permissions in its tenant.
type Role struct {
	Name        string       `json:"name"`
	Description string       `json:"description"`
	Permissions []Permission `json:"permissions"`
	Builtin     bool         `json:"builtin"`
	CreatedAt   *time.Time   `json:"created_at,omitempty"`
	UpdatedAt   *time.Time   `json:"updated_at,omitempty"`
}

// RoleList is GET /api/v1/roles: the built-in roles, then the tenant's
// custom roles by name.
type RoleList struct {
	Roles []Role `json:"roles"`
}

// RoleRequest is POST /api/v1/roles (Name required) and PUT
// /api/v1/roles/{name} (a whole replacement: Name may be left out, or
// must be the path's). Description is free text (MaxDescription bytes of
// UTF-8).
type RoleRequest struct {
	Name        string       `json:"name,omitempty"`
	Description string       `json:"description"`
	Permissions []Permission `json:"permissions"`
}

// Limits of custom roles.
const (
	// MaxRolesPerTenant bounds a tenant's custom roles.
	MaxRolesPerTenant = 100
	// MaxRoleQueuePatterns bounds the bytes of a role's distinct queue
	// patterns, joined by commas: what a QueueScopeHeader of it may
	// carry (MaxQueueScopeHeader).
	MaxRoleQueuePatterns = MaxQueueScopeHeader
)

// TenantRoles is control's internal answer to GET
// /internal/v1/tenants/{tid}/roles: the tenant's custom roles and their
// version (Revocations.Roles).
type TenantRoles struct {
	Roles   []Role `json:"roles"`
	Version uint64 `json:"version"`
}

// RoleChanged is control's internal answer to a role's creation or
// replacement: the role and the tenant's roles version after it.
type RoleChanged struct {
	Role
	RolesVersion uint64 `json:"roles_version"`
}

// RolesVersion is a tenant's roles version: control's internal answer to
// a role's deletion, and, with the tenant, an entry of Revocations.Roles.
type RolesVersion struct {
	TenantID string `json:"tenant_id,omitempty"`
	Version  uint64 `json:"roles_version"`
}

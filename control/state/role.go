package state

import (
	"time"

	"github.com/cockroachdb/pebble"

	"github.com/jobbie/jobbie/control/state/internal/layout"
	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// CustomRole is a tenant's custom role, as stored (JSON, an on-disk
// format: add fields, never rename them).
type CustomRole struct {
	Name        string               `json:"name"`
	Description string               `json:"description,omitempty"`
	Permissions []tenancy.Permission `json:"permissions"`
	CreatedAt   time.Time            `json:"created_at"`
	UpdatedAt   time.Time            `json:"updated_at"`
}

// PutRoleCmd creates (Create) or replaces a custom role. The proposer
// checked the shapes of its fields.
type PutRoleCmd struct {
	TenantID    string               `json:"tenant_id"`
	Name        string               `json:"name"`
	Description string               `json:"description,omitempty"`
	Permissions []tenancy.Permission `json:"permissions"`
	Create      bool                 `json:"create,omitempty"`
}

// DeleteRoleCmd deletes a custom role no live key carries.
type DeleteRoleCmd struct {
	TenantID string `json:"tenant_id"`
	Name     string `json:"name"`
}

// RoleChanged is a role as a command left it and the tenant's roles
// version after it.
type RoleChanged struct {
	Role    CustomRole
	Version uint64
}

func applyPutRole(tx *replica.Tx, c *PutRoleCmd) (RoleChanged, error) {
	if _, err := LoadTenant(tx, c.TenantID); err != nil {
		return RoleChanged{}, businessErr(err)
	}
	role, found, err := LoadRole(tx, c.TenantID, c.Name)
	if err != nil {
		panic(err)
	}
	switch {
	case c.Create && found:
		return RoleChanged{}, apierr.New(apierr.Conflict, "role %q exists", c.Name)
	case c.Create && must(count(tx, layout.Roles(c.TenantID))) >= wire.MaxRolesPerTenant:
		return RoleChanged{}, apierr.New(apierr.Conflict, "a tenant may have at most %d custom roles", wire.MaxRolesPerTenant)
	case !c.Create && !found:
		return RoleChanged{}, RoleNotFound(c.Name)
	case c.Create:
		role = CustomRole{Name: c.Name, CreatedAt: tx.Now}
	}
	role.Description, role.Permissions, role.UpdatedAt = c.Description, c.Permissions, tx.Now
	mustSetJSON(tx, layout.Role(c.TenantID, c.Name), role)
	return RoleChanged{Role: role, Version: bumpRolesVersion(tx, c.TenantID)}, nil
}

// applyDeleteRole deletes a role, unless a live key (unrevoked,
// unexpired) carries it: 409 role_in_use, counting them. Keys that no
// longer work may keep its name; they never work again.
func applyDeleteRole(tx *replica.Tx, c *DeleteRoleCmd) (uint64, error) {
	if _, err := LoadTenant(tx, c.TenantID); err != nil {
		return 0, businessErr(err)
	}
	if _, found, err := LoadRole(tx, c.TenantID, c.Name); err != nil {
		panic(err)
	} else if !found {
		return 0, RoleNotFound(c.Name)
	}
	if n := liveKeysOf(tx, c.TenantID, c.Name, tx.Now); n > 0 {
		return 0, apierr.New(apierr.RoleInUse, "role %q is carried by %d live API keys: revoke them (or wait until they expire) before deleting it", c.Name, n)
	}
	mustDelete(tx, layout.Role(c.TenantID, c.Name))
	return bumpRolesVersion(tx, c.TenantID), nil
}

// bumpRolesVersion moves tenant tid's roles version, and the revocation
// list's, which carries it to the gateways.
func bumpRolesVersion(tx *replica.Tx, tid string) uint64 {
	v := must(getUint64(tx, layout.RolesVersion(tid))) + 1
	mustSet(tx, layout.RolesVersion(tid), layout.Uint64(v))
	rv := must(getUint64(tx, layout.RevocationVersion()))
	mustSet(tx, layout.RevocationVersion(), layout.Uint64(rv+1))
	return v
}

// liveKeysOf counts the keys of tenant tid with role name that work at now.
func liveKeysOf(r pebble.Reader, tid, name string, now time.Time) int {
	n := 0
	err := scanJSON(r, layout.Keys(tid), func(_ []byte, k APIKey) {
		if string(k.Role) == name && k.Active(now) {
			n++
		}
	})
	if err != nil {
		panic(err)
	}
	return n
}

func RoleNotFound(name string) error { return apierr.New(apierr.NotFound, "role %q not found", name) }

func LoadRole(r pebble.Reader, tid, name string) (CustomRole, bool, error) {
	var role CustomRole
	ok, err := getJSON(r, layout.Role(tid, name), &role)
	return role, ok, err
}

func ListRoles(r pebble.Reader, tid string) ([]CustomRole, error) {
	out := []CustomRole{}
	err := scanJSON(r, layout.Roles(tid), func(_ []byte, role CustomRole) { out = append(out, role) })
	return out, err
}

// LoadRolesVersions is every tenant's roles version, for the revocation list.
func LoadRolesVersions(r pebble.Reader) ([]wire.RolesVersion, error) {
	var out []wire.RolesVersion
	err := scan(r, layout.RolesVersions(), func(k, v []byte) error {
		out = append(out, wire.RolesVersion{TenantID: layout.RolesVersionTenant(k), Version: layout.DecodeUint64(v)})
		return nil
	})
	return out, err
}

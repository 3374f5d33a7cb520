package controlfake

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// Signing keys, revocations, key use and custom roles: kept per tenant
// with a roles version per tenant that the revocation list carries, as
// control does.

func (fc *Control) JWKS(context.Context) (tenancy.JWKS, error) {
	fc.JWKSCalls.Add(1)
	defer fc.Unlock()
	if err := fc.enter(); err != nil {
		return tenancy.JWKS{}, err
	}
	if fc.jwksDown {
		return tenancy.JWKS{}, unavailable(apierr.Unavailable, "down", "")
	}
	return clone(tenancy.JWKS{Keys: fc.jwks}), nil
}

func (fc *Control) Revocations(context.Context) (wire.Revocations, time.Time, error) {
	defer fc.Unlock()
	if err := fc.enter(); err != nil {
		return wire.Revocations{}, time.Time{}, err
	}
	if fc.revsDown {
		return wire.Revocations{}, time.Time{}, unavailable(apierr.Unavailable, "down", "")
	}
	rev := wire.Revocations{Version: fc.version, Revoked: fc.revoked, SigningKeys: fc.retiring}
	for tid, v := range fc.rolesVersion {
		rev.Roles = append(rev.Roles, wire.RolesVersion{TenantID: tid, Version: v})
	}
	for _, ks := range fc.rotated {
		rev.Rotated = append(rev.Rotated, ks)
	}
	return clone(rev), time.Time{}, nil
}

func (fc *Control) ReportKeyUse(_ context.Context, in wire.KeyUsage) error {
	defer fc.Unlock()
	if err := fc.enter(); err != nil {
		return err
	}
	if len(in.Keys) > wire.MaxKeyUses {
		return refuse(apierr.Field("keys", "bad report"))
	}
	fc.uses = append(fc.uses, clone(in).Keys...)
	return nil
}

// SetJWKS publishes keys, or fails the JWKS when down.
func (fc *Control) SetJWKS(keys []tenancy.JWK, down bool) {
	fc.Lock()
	defer fc.Unlock()
	fc.jwks, fc.jwksDown = keys, down
}

// SetRevocationsDown makes the revocation list fail (or serve again).
func (fc *Control) SetRevocationsDown(down bool) {
	fc.Lock()
	defer fc.Unlock()
	fc.revsDown = down
}

// Revoke revokes key id.
func (fc *Control) Revoke(keyID string) {
	fc.Lock()
	defer fc.Unlock()
	fc.revokeLocked(keyID)
}

func (fc *Control) revokeLocked(keyID string) {
	fc.revoked = append(fc.revoked, keyID)
	fc.version++
}

// IsRevoked reports whether key id was revoked.
func (fc *Control) IsRevoked(keyID string) bool {
	fc.Lock()
	defer fc.Unlock()
	return slices.Contains(fc.revoked, keyID)
}

// Retire lists signing key kid as retiring at at.
func (fc *Control) Retire(kid string, at time.Time) {
	fc.Lock()
	defer fc.Unlock()
	fc.retiring = append(fc.retiring, wire.RetiringSigningKey{Kid: kid, RetiresAt: at})
	fc.version++
}

// KeyUses is what gateways reported, in order.
func (fc *Control) KeyUses() []wire.KeyUse {
	fc.Lock()
	defer fc.Unlock()
	return slices.Clone(fc.uses)
}

func (fc *Control) TenantRoles(_ context.Context, _, tid string) (wire.TenantRoles, error) {
	tid = strings.Clone(tid)
	fc.RoleFetches.Add(1)
	defer fc.Unlock()
	if err := fc.enter(); err != nil {
		return wire.TenantRoles{}, err
	}
	out := wire.TenantRoles{Roles: []wire.Role{}, Version: fc.rolesVersion[tid]}
	for _, role := range fc.roles[tid] {
		out.Roles = append(out.Roles, role)
	}
	slices.SortFunc(out.Roles, func(a, b wire.Role) int { return strings.Compare(a.Name, b.Name) })
	return clone(out), nil
}

func (fc *Control) Role(_ context.Context, _, tid, name string) (wire.Role, error) {
	tid, name = strings.Clone(tid), strings.Clone(name)
	defer fc.Unlock()
	if err := fc.enter(); err != nil {
		return wire.Role{}, err
	}
	role, ok := fc.roles[tid][name]
	if !ok {
		return wire.Role{}, refuse(apierr.New(apierr.NotFound, "role not found"))
	}
	return clone(role), nil
}

func (fc *Control) CreateRole(ctx context.Context, _, tid string, in wire.RoleRequest) (wire.RoleChanged, error) {
	tid = strings.Clone(tid)
	return keyed(fc, ctx, tid, "roles", func() (wire.RoleChanged, error) { return fc.createRole(tid, in) })
}

func (fc *Control) createRole(tid string, in wire.RoleRequest) (wire.RoleChanged, error) {
	defer fc.Unlock()
	if err := fc.enter(); err != nil {
		return wire.RoleChanged{}, err
	}
	if _, ok := fc.roles[tid][in.Name]; ok {
		return wire.RoleChanged{}, refuse(apierr.New(apierr.Conflict, "role exists"))
	}
	role := fc.putRoleLocked(tid, in.Name, clone(in))
	return clone(wire.RoleChanged{Role: role, RolesVersion: fc.rolesVersion[tid]}), nil
}

func (fc *Control) UpdateRole(_ context.Context, _, tid, name string, in wire.RoleRequest) (wire.RoleChanged, error) {
	tid, name = strings.Clone(tid), strings.Clone(name)
	defer fc.Unlock()
	if err := fc.enter(); err != nil {
		return wire.RoleChanged{}, err
	}
	if _, ok := fc.roles[tid][name]; !ok {
		return wire.RoleChanged{}, refuse(apierr.New(apierr.NotFound, "role not found"))
	}
	role := fc.putRoleLocked(tid, name, clone(in))
	return clone(wire.RoleChanged{Role: role, RolesVersion: fc.rolesVersion[tid]}), nil
}

func (fc *Control) DeleteRole(_ context.Context, _, tid, name string) (wire.RolesVersion, error) {
	tid, name = strings.Clone(tid), strings.Clone(name)
	defer fc.Unlock()
	if err := fc.enter(); err != nil {
		return wire.RolesVersion{}, err
	}
	if _, ok := fc.roles[tid][name]; !ok {
		return wire.RolesVersion{}, refuse(apierr.New(apierr.NotFound, "role not found"))
	}
	for _, k := range fc.keys[tid] {
		if k.Role == name {
			return wire.RolesVersion{}, refuse(apierr.New(apierr.RoleInUse, "role %q is carried by 1 live API keys", name))
		}
	}
	delete(fc.roles[tid], name)
	fc.bumpRolesLocked(tid)
	return wire.RolesVersion{Version: fc.rolesVersion[tid]}, nil
}

// putRoleLocked stores a role and moves the tenant's roles version.
func (fc *Control) putRoleLocked(tid, name string, in wire.RoleRequest) wire.Role {
	if fc.roles[tid] == nil {
		fc.roles[tid] = map[string]wire.Role{}
	}
	at := Jan(4)
	role := wire.Role{Name: name, Description: in.Description, Permissions: in.Permissions, CreatedAt: &at, UpdatedAt: &at}
	fc.roles[tid][name] = role
	fc.bumpRolesLocked(tid)
	return role
}

func (fc *Control) bumpRolesLocked(tid string) {
	fc.rolesVersion[tid]++
	fc.version++
}

// SetRole defines a role as another gateway would have: a gateway learns
// of it from the revocation list.
func (fc *Control) SetRole(tid, name string, perms ...wire.Permission) {
	fc.Lock()
	defer fc.Unlock()
	fc.putRoleLocked(tid, name, wire.RoleRequest{Permissions: perms})
}

// DropRole deletes a role as another gateway would have.
func (fc *Control) DropRole(tid, name string) {
	fc.Lock()
	defer fc.Unlock()
	delete(fc.roles[tid], name)
	fc.bumpRolesLocked(tid)
}

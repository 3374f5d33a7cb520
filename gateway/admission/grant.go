package admission

import (
	"slices"

	"github.com/jobbie/jobbie/gateway/admitted"
	"github.com/jobbie/jobbie/gateway/controlapi"
	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// A key never grants more than it holds. What it holds is its role's
// permissions (a built-in role's, tenancy.BuiltinPermissions, or its
// custom role's) narrowed to the key's namespaces. A role it defines or
// changes, and a key it mints, rotates or revokes, must be within that
// (tenancy.Uncovered). Between built-in roles the ranks decide, as they
// always have (tenancy.CanGrant); owner and admin keys, which only
// owner and admin keys may mint, are out of a custom role's reach.

// held is what r's key holds.
func held(r *admitted.Request) []tenancy.Permission {
	if !isCustomRole(r.Key.Role) {
		return narrow(tenancy.BuiltinPermissions(r.Key.Role), r.Key.Namespaces)
	}
	ps, _ := r.Roles.Permissions(r.Key.Role) // Admit checked it exists
	return narrow(ps, r.Key.Namespaces)
}

// narrow limits permissions to namespaces nss (a key's; "*" is every
// namespace): each keeps the namespaces of nss its patterns match, and
// one that matches none is dropped.
func narrow(ps []tenancy.Permission, nss []string) []tenancy.Permission {
	if slices.Contains(nss, tenancy.AllNamespaces) {
		return ps
	}
	out := make([]tenancy.Permission, 0, len(ps))
	for _, p := range ps {
		var in []string
		for _, ns := range nss {
			if slices.ContainsFunc(p.Namespaces, func(pat string) bool { return tenancy.MatchPattern(pat, ns) }) {
				in = append(in, ns)
			}
		}
		if len(in) > 0 {
			p.Namespaces = in
			out = append(out, p)
		}
	}
	return out
}

// MayGrant refuses what r may not give away: want, the permissions of a
// role it defines or of a key it mints (what names the act, for the
// message).
func MayGrant(r *admitted.Request, want []tenancy.Permission, what string) error {
	if u := tenancy.Uncovered(held(r), want); u != "" {
		return apierr.New(apierr.Forbidden, "API key %s may not %s: that grants %s, which the key does not hold (role %s in its namespaces)",
			r.Key.Subject, what, u, r.Key.Role)
	}
	return nil
}

// MayGrantRank is the rank rule between built-in roles: r may act (verb:
// mint, revoke, rotate) on keys of role only when its own role may grant
// it. Owner and admin keys are for owner and admin keys alone.
func MayGrantRank(r *admitted.Request, role tenancy.Role, verb string) error {
	custom := isCustomRole(r.Key.Role)
	switch {
	case !custom && !isCustomRole(role) && !tenancy.CanGrant(r.Key.Role, role):
		return apierr.New(apierr.Forbidden, "role %s may not %s %s keys", r.Key.Role, verb, role)
	case custom && (role == tenancy.RoleOwner || role == tenancy.RoleAdmin):
		return apierr.New(apierr.Forbidden, "role %s may not %s %s keys: only owner and admin keys may", r.Key.Role, verb, role)
	}
	return nil
}

// GrantOf is role's permissions: a built-in role's, or a custom role's
// as control has it now; found is false for a custom role the tenant
// does not have.
func (g *Gate) GrantOf(r *admitted.Request, role tenancy.Role) (ps []tenancy.Permission, found bool, err error) {
	if !isCustomRole(role) {
		return tenancy.BuiltinPermissions(role), true, nil
	}
	def, err := g.control.Role(g.ctx, r.RequestID, r.Key.TenantID, string(role))
	err = controlapi.ForTenant(g.log, r.RequestID, err)
	switch {
	case apierr.CodeOf(err) == apierr.NotFound:
		return nil, false, nil
	case err != nil:
		return nil, false, err
	}
	return PermissionsOf(def), true, nil
}

// PermissionsOf are a role's permissions in tenancy's terms.
func PermissionsOf(role wire.Role) []tenancy.Permission {
	ps := make([]tenancy.Permission, len(role.Permissions))
	for i, p := range role.Permissions {
		ps[i] = tenancy.Permission(p)
	}
	return ps
}

// MayGrantKey refuses a key of role, granting grant (GrantOf), over
// namespaces nss that r could not have minted (verb: mint, revoke,
// rotate): beyond the rank rule, where either role is custom, the key's
// grant must be within what r holds.
func MayGrantKey(r *admitted.Request, role tenancy.Role, grant []tenancy.Permission, nss []string, verb string) error {
	if err := MayGrantRank(r, role, verb); err != nil {
		return err
	}
	if !isCustomRole(r.Key.Role) && !isCustomRole(role) {
		return nil // ranked: an owner or admin holds every built-in role's grant
	}
	return MayGrant(r, narrow(grant, nss), verb+" a key of role "+string(role))
}

// MayManageKey is MayGrantKey for a key that exists (revoke, rotate): a
// custom role the tenant no longer has grants nothing.
func (g *Gate) MayManageKey(r *admitted.Request, role tenancy.Role, nss []string, verb string) error {
	if err := MayGrantRank(r, role, verb); err != nil {
		return err
	}
	grant, _, err := g.GrantOf(r, role)
	if err != nil {
		return err
	}
	return MayGrantKey(r, role, grant, nss, verb)
}

// everyNamespacesUsage is usage.read over the whole tenant.
var everyNamespacesUsage = []tenancy.Permission{{Actions: []string{string(tenancy.ActUsageRead)}, Namespaces: []string{"*"}, Queues: []string{"*"}}}

// ReadsAllUsage reports whether r's key may read usage in every
// namespace of its tenant: its namespaces and its role's cover them all.
func ReadsAllUsage(r *admitted.Request) bool {
	if !r.Key.AllowsNamespace(tenancy.AllNamespaces) {
		return false
	}
	perms := tenancy.BuiltinPermissions(r.Key.Role)
	if r.Roles != nil {
		perms, _ = r.Roles.Permissions(r.Key.Role)
	}
	return tenancy.Uncovered(perms, everyNamespacesUsage) == ""
}

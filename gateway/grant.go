package gateway

import (
	"slices"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/tenancy"
)

// A key never grants more than it holds. What it holds is its role's
// permissions (a built-in role's, tenancy.BuiltinPermissions, or its
// custom role's) narrowed to the key's namespaces. A role it defines or
// changes, and a key it mints, rotates or revokes, must be within that
// (tenancy.Uncovered). Between built-in roles the ranks decide, as they
// always have (tenancy.Role.CanGrant); owner and admin keys, which only
// owner and admin keys may mint, are out of a custom role's reach.

// held is what r's key holds.
func (s *Server) held(r *call) ([]tenancy.Permission, error) {
	if !isCustomRole(r.key.Role) {
		return narrow(tenancy.BuiltinPermissions(r.key.Role), r.key.Namespaces), nil
	}
	ps, _ := r.roles.permissions(r.key.Role) // admit checked it exists
	return narrow(ps, r.key.Namespaces), nil
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

// mayGrant refuses what r may not give away: want, the permissions of a
// role it defines or of a key it mints (what names the act, for the
// message).
func (s *Server) mayGrant(r *call, want []tenancy.Permission, what string) error {
	held, err := s.held(r)
	if err != nil {
		return err
	}
	if u := tenancy.Uncovered(held, want); u != "" {
		return apierr.New(apierr.Forbidden, "API key %s may not %s: that grants %s, which the key does not hold (role %s in its namespaces)",
			r.key.Subject, what, u, r.key.Role)
	}
	return nil
}

// mayGrantRank is the rank rule between built-in roles: r may act (verb:
// mint, revoke, rotate) on keys of role only when its own role may grant
// it. Owner and admin keys are for owner and admin keys alone.
func mayGrantRank(r *call, role tenancy.Role, verb string) error {
	custom := isCustomRole(r.key.Role)
	switch {
	case !custom && !isCustomRole(role) && !r.key.Role.CanGrant(role):
		return apierr.New(apierr.Forbidden, "role %s may not %s %s keys", r.key.Role, verb, role)
	case custom && (role == tenancy.RoleOwner || role == tenancy.RoleAdmin):
		return apierr.New(apierr.Forbidden, "role %s may not %s %s keys: only owner and admin keys may", r.key.Role, verb, role)
	}
	return nil
}

// grantOf is role's permissions: a built-in role's, or a custom role's
// as control has it now; found is false for a custom role the tenant
// does not have.
func (s *Server) grantOf(r *call, role tenancy.Role) (ps []tenancy.Permission, found bool, err error) {
	if !isCustomRole(role) {
		return tenancy.BuiltinPermissions(role), true, nil
	}
	def, err := s.fetchRole(r, string(role))
	switch {
	case apierr.CodeOf(err) == apierr.NotFound:
		return nil, false, nil
	case err != nil:
		return nil, false, err
	}
	return permissionsOf(def), true, nil
}

// mayGrantKey refuses a key of role, granting grant (grantOf), over
// namespaces nss that r could not have minted (verb: mint, revoke,
// rotate): beyond the rank rule, where either role is custom, the key's
// grant must be within what r holds.
func (s *Server) mayGrantKey(r *call, role tenancy.Role, grant []tenancy.Permission, nss []string, verb string) error {
	if err := mayGrantRank(r, role, verb); err != nil {
		return err
	}
	if !isCustomRole(r.key.Role) && !isCustomRole(role) {
		return nil // ranked: an owner or admin holds every built-in role's grant
	}
	return s.mayGrant(r, narrow(grant, nss), verb+" a key of role "+string(role))
}

// mayManageKey is mayGrantKey for a key that exists (revoke, rotate): a
// custom role the tenant no longer has grants nothing.
func (s *Server) mayManageKey(r *call, role tenancy.Role, nss []string, verb string) error {
	if err := mayGrantRank(r, role, verb); err != nil {
		return err
	}
	grant, _, err := s.grantOf(r, role)
	if err != nil {
		return err
	}
	return s.mayGrantKey(r, role, grant, nss, verb)
}

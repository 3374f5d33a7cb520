package admission

import (
	"strings"
	"sync"

	"github.com/casbin/casbin/v2"
	"github.com/gofiber/fiber/v2"
	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/jobbie/jobbie/gateway/admitted"
	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/tenancy"
)

// authorizer answers RBAC questions with casbin and remembers the answers:
// decisions depend only on (role, tenant, object, action), so after warm-up
// the hot path never evaluates the model.
type authorizer struct {
	mu        sync.Mutex // guards the enforcer, which is only used on misses
	enf       *casbin.Enforcer
	decisions *lru.Cache[decisionKey, bool]
}

// decisionKey names a decision; ns stands for tenancy.NamespaceObject(ns),
// built only on a miss so the hot path does not allocate it.
type decisionKey struct {
	role   tenancy.Role
	tenant string
	ns     string
	act    tenancy.Action
}

func newAuthorizer(size int) (*authorizer, error) {
	enf, err := tenancy.NewEnforcer()
	if err != nil {
		return nil, err
	}
	decisions, err := lru.New[decisionKey, bool](size)
	if err != nil {
		return nil, err
	}
	return &authorizer{enf: enf, decisions: decisions}, nil
}

// allowed reports whether role may perform act on namespace ns of tenant.
func (z *authorizer) allowed(role tenancy.Role, tenant, ns string, act tenancy.Action) (bool, error) {
	k := decisionKey{role: role, tenant: tenant, ns: ns, act: act}
	if ok, hit := z.decisions.Get(k); hit {
		return ok, nil
	}
	z.mu.Lock()
	ok, err := z.enf.Enforce(string(role), tenant, tenancy.NamespaceObject(ns), string(act))
	z.mu.Unlock()
	if err != nil {
		return false, apierr.New(apierr.Internal, "authorization failed: %v", err)
	}
	k.ns = strings.Clone(ns) // ns may alias request memory
	z.decisions.Add(k, ok)
	return ok, nil
}

// authorize is allowed as an API error naming the role and action.
func (z *authorizer) authorize(key *tenancy.KeyClaims, ns string, act tenancy.Action) error {
	ok, err := z.allowed(key.Role, key.TenantID, ns, act)
	if err != nil {
		return err
	}
	if !ok {
		return apierr.New(apierr.Forbidden, "role %s may not %s in namespace %q", key.Role, act, ns)
	}
	return nil
}

// isCustomRole reports whether a verified key's role is a custom role's
// name (tenancy.KeyClaims.CheckAnyRole admitted it), without the name
// check tenancy.Role.IsCustom does: built-in roles pay nothing for
// custom ones.
func isCustomRole(r tenancy.Role) bool {
	switch r {
	case tenancy.RoleOwner, tenancy.RoleAdmin, tenancy.RoleDeveloper, tenancy.RoleProducer,
		tenancy.RoleWorker, tenancy.RoleViewer, tenancy.RoleBilling, tenancy.RoleOperator:
		return false
	}
	return true
}

// AllowedIn reports whether r's key may act on namespace ns as a whole
// (tenancy.NamespaceObject): a custom role needs the action there on
// queues "*".
func (g *Gate) AllowedIn(r *admitted.Request, ns string, act tenancy.Action) (bool, error) {
	if r.Roles == nil {
		return g.rbac.allowed(r.Key.Role, r.Key.TenantID, ns, act)
	}
	return r.Roles.Allowed(r.Key.Role, ns, "*", act)
}

// AuthorizeIn is AllowedIn as an API error naming the role and action.
func (g *Gate) AuthorizeIn(r *admitted.Request, ns string, act tenancy.Action) error {
	ok, err := g.AllowedIn(r, ns, act)
	switch {
	case err != nil:
		return err
	case ok:
		return nil
	case r.Roles != nil:
		return apierr.New(apierr.Forbidden, "role %s may not %s in namespace %q as a whole (that needs the action on queues \"*\")", r.Key.Role, act, ns)
	}
	return apierr.New(apierr.Forbidden, "role %s may not %s in namespace %q", r.Key.Role, act, ns)
}

// authorizeRoute decides whether r may use a route of rule. Built-in
// roles are decided as ever. A custom role must exist in its tenant; on
// a route about queues it needs the action on some queue of the
// namespace, on the queue the path names when it names one, and the
// request carries the queues it may act on to the shard (Request.Scope)
// unless that is every queue; any other route is about the namespace as
// a whole.
func (g *Gate) authorizeRoute(c *fiber.Ctx, rule *Rule, r *admitted.Request) error {
	if r.Roles == nil {
		return g.rbac.authorize(r.Key, r.NS, rule.Action)
	}
	if !rule.Scoped {
		return g.AuthorizeIn(r, r.NS, rule.Action)
	}
	sc := r.Roles.Scope(r.Key.Role, r.NS, rule.Action)
	if sc.None() {
		return apierr.New(apierr.Forbidden, "role %s may not %s on any queue of namespace %q", r.Key.Role, rule.Action, r.NS)
	}
	if rule.QueueNamed {
		q := c.Params("name")
		ok, err := r.Roles.Allowed(r.Key.Role, r.NS, q, rule.Action)
		if err != nil {
			return err
		}
		if !ok {
			return apierr.New(apierr.Forbidden, "role %s may not %s on queue %q of namespace %q", r.Key.Role, rule.Action, q, r.NS)
		}
	}
	r.Scope = sc
	return nil
}

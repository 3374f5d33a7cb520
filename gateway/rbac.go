package gateway

import (
	"strings"
	"sync"

	"github.com/casbin/casbin/v2"
	"github.com/gofiber/fiber/v2"
	lru "github.com/hashicorp/golang-lru/v2"

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

// allowedIn reports whether r's key may act on namespace ns as a whole
// (tenancy.NamespaceObject): a custom role needs the action there on
// queues "*".
func (s *Server) allowedIn(r *call, ns string, act tenancy.Action) (bool, error) {
	if r.roles == nil {
		return s.rbac.allowed(r.key.Role, r.key.TenantID, ns, act)
	}
	return r.roles.allowed(r.key.Role, ns, "*", act)
}

// authorizeIn is allowedIn as an API error naming the role and action.
func (s *Server) authorizeIn(r *call, ns string, act tenancy.Action) error {
	ok, err := s.allowedIn(r, ns, act)
	switch {
	case err != nil:
		return err
	case ok:
		return nil
	case r.roles != nil:
		return apierr.New(apierr.Forbidden, "role %s may not %s in namespace %q as a whole (that needs the action on queues \"*\")", r.key.Role, act, ns)
	}
	return apierr.New(apierr.Forbidden, "role %s may not %s in namespace %q", r.key.Role, act, ns)
}

// authorizeRoute decides whether r may use route rt. Built-in roles are
// decided as ever. A custom role must exist in its tenant; on a route
// about queues it needs the action on some queue of the namespace, on
// the queue the path names when it names one, and the request carries
// the queues it may act on to the shard (call.scope) unless that is
// every queue; any other route is about the namespace as a whole.
func (s *Server) authorizeRoute(c *fiber.Ctx, rt route, r *call) error {
	if r.roles == nil {
		return s.rbac.authorize(r.key, r.ns, rt.action)
	}
	if !rt.serve.queues {
		return s.authorizeIn(r, r.ns, rt.action)
	}
	sc := r.roles.scope(r.key.Role, r.ns, rt.action)
	if sc.none() {
		return apierr.New(apierr.Forbidden, "role %s may not %s on any queue of namespace %q", r.key.Role, rt.action, r.ns)
	}
	if rt.namesQueue() {
		q := c.Params("name")
		ok, err := r.roles.allowed(r.key.Role, r.ns, q, rt.action)
		if err != nil {
			return err
		}
		if !ok {
			return apierr.New(apierr.Forbidden, "role %s may not %s on queue %q of namespace %q", r.key.Role, rt.action, q, r.ns)
		}
	}
	r.scope = sc
	return nil
}

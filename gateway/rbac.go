package gateway

import (
	"strings"
	"sync"

	"github.com/casbin/casbin/v2"
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

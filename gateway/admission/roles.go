package admission

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/casbin/casbin/v2"
	lru "github.com/hashicorp/golang-lru/v2"
	"golang.org/x/sync/singleflight"

	"github.com/jobbie/jobbie/gateway/admitted"
	"github.com/jobbie/jobbie/gateway/controlapi"
	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// Custom roles at the gateway. A key of a custom role carries only the
// role's name; what the role grants is its tenant's current definition,
// which the gateway keeps per tenant as a RoleSet: one version of the
// tenant's roles, with the casbin enforcer of their policies
// (tenancy.RolePolicies) and the decisions and queue scopes worked out
// from them. A change of the tenant's roles makes a new set, so nothing
// decided under the old roles is served after it.
//
// A set is used while its version is at least the one the gateway knows
// the tenant to have: the revocation list carries every tenant's roles
// version (polled every RevocationInterval, 1 s by default), and a change
// made through this gateway raises it at once. So this gateway applies
// its own changes to the next request, and the others within one
// revocation poll, plus the fetch of the new roles. Keys of built-in
// roles never look here.

// Sizes of a RoleSet's caches.
const (
	roleDecisionCacheSize = 1024
	roleScopeCacheSize    = 256
	// RoleSetCacheSize bounds the tenants whose roles a gateway keeps.
	RoleSetCacheSize = 10_000
)

// RoleSet is one version of a tenant's custom roles; it is the
// admitted.Roles of a request by a key of one.
type RoleSet struct {
	tenant  string
	version uint64
	roles   map[tenancy.Role][]tenancy.Permission

	mu        sync.Mutex // guards enf, built on the first decision
	enf       *casbin.Enforcer
	decisions *lru.Cache[roleDecision, bool]
	scopes    *lru.Cache[scopeKey, admitted.Scope]
}

// roleDecision names a decision: role may act on queue of namespace ns
// (queue "*": on the namespace as a whole, tenancy.NamespaceObject).
type roleDecision struct {
	role      tenancy.Role
	ns, queue string
	act       tenancy.Action
}

// scopeKey names the queue scope of role for act in namespace ns.
type scopeKey struct {
	role tenancy.Role
	ns   string
	act  tenancy.Action
}

func newRoleSet(tid string, tr wire.TenantRoles) *RoleSet {
	rs := &RoleSet{tenant: tid, version: tr.Version, roles: make(map[tenancy.Role][]tenancy.Permission, len(tr.Roles))}
	for _, r := range tr.Roles {
		ps := make([]tenancy.Permission, len(r.Permissions))
		for i, p := range r.Permissions {
			ps[i] = tenancy.Permission(p)
		}
		rs.roles[tenancy.Role(r.Name)] = ps
	}
	rs.decisions, _ = lru.New[roleDecision, bool](roleDecisionCacheSize)
	rs.scopes, _ = lru.New[scopeKey, admitted.Scope](roleScopeCacheSize)
	return rs
}

// Permissions are role's permissions; ok is false when the tenant has no
// such role (any more).
func (rs *RoleSet) Permissions(role tenancy.Role) ([]tenancy.Permission, bool) {
	ps, ok := rs.roles[role]
	return ps, ok
}

// Allowed asks the roles' casbin policies whether role may act on queue
// of namespace ns ("*": the namespace as a whole).
func (rs *RoleSet) Allowed(role tenancy.Role, ns, queue string, act tenancy.Action) (bool, error) {
	k := roleDecision{role: role, ns: ns, queue: queue, act: act}
	if ok, hit := rs.decisions.Get(k); hit {
		return ok, nil
	}
	rs.mu.Lock()
	ok, err := rs.enforce(string(role), tenancy.QueueObject(ns, queue), string(act))
	rs.mu.Unlock()
	if err != nil {
		return false, apierr.New(apierr.Internal, "authorization failed: %v", err)
	}
	k.ns, k.queue = strings.Clone(ns), strings.Clone(queue) // they may alias request memory
	rs.decisions.Add(k, ok)
	return ok, nil
}

// enforce evaluates the policies; rs.mu is held.
func (rs *RoleSet) enforce(role, obj, act string) (bool, error) {
	if rs.enf == nil {
		enf, err := tenancy.NewEnforcer()
		if err != nil {
			return false, err
		}
		for name, ps := range rs.roles {
			if pol := tenancy.RolePolicies(rs.tenant, string(name), ps); len(pol) > 0 {
				if _, err := enf.AddPolicies(pol); err != nil {
					return false, err
				}
			}
		}
		rs.enf = enf
	}
	return rs.enf.Enforce(role, rs.tenant, obj, act)
}

// Scope is the queues role may act on for act in namespace ns
// (tenancy.QueueScopeFor).
func (rs *RoleSet) Scope(role tenancy.Role, ns string, act tenancy.Action) admitted.Scope {
	k := scopeKey{role: role, ns: ns, act: act}
	if q, hit := rs.scopes.Get(k); hit {
		return q
	}
	var q admitted.Scope
	q.Header, q.Limited = tenancy.QueueScopeFor(rs.roles[role], act, ns).Header()
	k.ns = strings.Clone(ns)
	rs.scopes.Add(k, q)
	return q
}

// roleCache keeps the RoleSets of the tenants whose custom-role keys
// this gateway serves.
type roleCache struct {
	control controlapi.Control
	ctx     context.Context // bounds fetches; ends when the gateway stops
	sets    *lru.Cache[string, *RoleSet]
	fetches singleflight.Group

	listed atomic.Pointer[map[string]uint64] // tenant → roles version, from the revocation list
	mu     sync.Mutex                        // guards made, and installing a set
	made   map[string]uint64                 // versions of this gateway's own changes the list does not show yet
}

func newRoleCache(ctx context.Context, control controlapi.Control) *roleCache {
	sets, _ := lru.New[string, *RoleSet](RoleSetCacheSize)
	return &roleCache{control: control, ctx: ctx, sets: sets, made: map[string]uint64{}}
}

// want is the least roles version of tenant tid a set must have.
func (rc *roleCache) want(tid string) uint64 {
	var v uint64
	if m := rc.listed.Load(); m != nil {
		v = (*m)[tid]
	}
	rc.mu.Lock()
	v = max(v, rc.made[tid])
	rc.mu.Unlock()
	return v
}

// get is tenant tid's current roles, in which role is expected. While
// control cannot be reached, the last set fetched serves (the revocation
// list's freshness bound ends that: past it every key is refused); with
// none, the request gets 503. A set without role is fetched again: the
// role may be newer than the last revocation poll (a key of a deleted
// role cannot work any more, so this costs nothing in the normal course).
func (rc *roleCache) get(tid, requestID string, role tenancy.Role) (*RoleSet, error) {
	cur, ok := rc.sets.Get(tid)
	if ok && cur.version >= rc.want(tid) {
		if _, has := cur.roles[role]; has {
			return cur, nil
		}
	}
	var set *RoleSet
	var err error
	for range 2 { // a fetch that was under way may predate the version wanted: then one more
		var v any
		if v, err, _ = rc.fetches.Do(tid, func() (any, error) { return rc.fetch(strings.Clone(tid), requestID) }); err != nil {
			break
		}
		if set = v.(*RoleSet); set.version >= rc.want(tid) {
			break
		}
	}
	if err == nil {
		return set, nil
	}
	if ok {
		return cur, nil
	}
	return nil, apierr.Retry(apierr.Unavailable, 1, "the control plane is unavailable to tell this key's role; retry shortly")
}

// fetch loads tenant tid's roles from control and keeps them, unless a
// newer set was kept meanwhile.
func (rc *roleCache) fetch(tid, requestID string) (*RoleSet, error) {
	tr, err := rc.control.TenantRoles(rc.ctx, requestID, tid)
	if err != nil {
		return nil, err
	}
	set := newRoleSet(tid, tr)
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if cur, ok := rc.sets.Peek(tid); ok && cur.version > set.version {
		return cur, nil
	}
	rc.sets.Add(tid, set)
	return set, nil
}

// changed records a change of tenant tid's roles made through this
// gateway, which brought them to version: the next request fetches them.
func (rc *roleCache) changed(tid string, version uint64) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if version > rc.made[tid] {
		rc.made[strings.Clone(tid)] = version
	}
}

// update takes the roles versions of a new revocation list.
func (rc *roleCache) update(versions []wire.RolesVersion) {
	m := make(map[string]uint64, len(versions))
	for _, v := range versions {
		m[v.TenantID] = v.Version
	}
	rc.listed.Store(&m)
	rc.mu.Lock()
	defer rc.mu.Unlock()
	for tid, v := range rc.made {
		if m[tid] >= v {
			delete(rc.made, tid)
		}
	}
}

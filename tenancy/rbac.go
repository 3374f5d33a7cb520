package tenancy

import (
	"fmt"
	"strings"

	"github.com/casbin/casbin/v2"
	"github.com/casbin/casbin/v2/model"
)

// RBACModel is the one casbin model of Jobbie. Requests are
// (role, tenant, object, action); objects are "ns/<namespace>/queue/<queue>"
// (QueueObject), with queue "*" for a request about no one queue
// (NamespaceObject). Policies may use "*" for the tenant, keyMatch
// patterns for actions, and for objects "*" or namespace and queue
// patterns (permissions.go) matched by objMatch. Built-in roles' policies
// hold in every tenant; a custom role's (RolePolicies) in its own. The
// role definition g is there for roles that inherit from others; none do
// yet. An owner-only action (OwnerOnly) is refused to every other role,
// built in or custom, whatever its policies say.
const RBACModel = `
[request_definition]
r = sub, dom, obj, act

[policy_definition]
p = sub, dom, obj, act

[role_definition]
g = _, _, _

[policy_effect]
e = some(where (p.eft == allow))

[matchers]
m = (r.sub == p.sub || g(r.sub, p.sub, r.dom)) && (p.dom == "*" || r.dom == p.dom) && objMatch(r.obj, p.obj) && keyMatch(r.act, p.act) && (r.sub == "owner" || !ownerOnly(r.act))
`

// OwnerOnly are the actions only a tenant's owner holds: the key that can
// make the namespace's data unreadable (encryption.manage).
var OwnerOnly = map[Action]bool{ActEncryptionManage: true}

// BuiltinPolicies grant each built-in role its actions in every tenant.
var BuiltinPolicies = [][]string{
	{"owner", "*", "*", "*"},
	{"admin", "*", "*", "*"},
	{"developer", "*", "*", "job.*"},
	{"developer", "*", "*", "queue.*"},
	{"developer", "*", "*", "schedule.*"},
	{"developer", "*", "*", "namespace.read"},
	{"developer", "*", "*", "backup.read"},
	{"developer", "*", "*", "webhook.*"},
	{"producer", "*", "*", "job.enqueue"},
	{"producer", "*", "*", "job.read"},
	{"producer", "*", "*", "queue.read"},
	{"worker", "*", "*", "job.work"},
	{"worker", "*", "*", "job.read"},
	{"worker", "*", "*", "queue.read"},
	{"viewer", "*", "*", "job.read"},
	{"viewer", "*", "*", "queue.read"},
	{"viewer", "*", "*", "schedule.read"},
	{"viewer", "*", "*", "namespace.read"},
	{"viewer", "*", "*", "backup.read"},
	{"viewer", "*", "*", "webhook.read"},
	{"billing", "*", "*", "usage.read"}, // usage and invoices, nothing else
}

// NewEnforcer returns a casbin enforcer loaded with the model and the
// built-in policies.
func NewEnforcer() (*casbin.Enforcer, error) {
	m, err := model.NewModelFromString(RBACModel)
	if err != nil {
		return nil, fmt.Errorf("tenancy: rbac model: %w", err)
	}
	e, err := casbin.NewEnforcer(m)
	if err != nil {
		return nil, fmt.Errorf("tenancy: rbac enforcer: %w", err)
	}
	e.AddFunction("ownerOnly", func(args ...any) (any, error) {
		a, _ := args[0].(string)
		return OwnerOnly[Action(a)], nil
	})
	e.AddFunction("objMatch", func(args ...any) (any, error) {
		r, _ := args[0].(string)
		p, _ := args[1].(string)
		return ObjectMatch(r, p), nil
	})
	for _, p := range BuiltinPolicies {
		if _, err := e.AddPolicy(p[0], p[1], p[2], p[3]); err != nil {
			return nil, fmt.Errorf("tenancy: rbac policy %v: %w", p, err)
		}
	}
	return e, nil
}

// NamespaceObject is the RBAC object of a request about a namespace as a
// whole, or about no one queue of it.
func NamespaceObject(ns string) string { return QueueObject(ns, "*") }

// QueueObject is the RBAC object of a request about queue q of namespace
// ns (or, in a policy, of the queues and namespaces the patterns match).
func QueueObject(ns, q string) string { return "ns/" + ns + "/queue/" + q }

// ObjectMatch reports whether policy object p covers request object r: p
// is "*", or its namespace and queue patterns match r's namespace and
// queue. A request's queue "*" (no one queue) matches only a policy's "*".
func ObjectMatch(r, p string) bool {
	if p == "*" {
		return true
	}
	rns, rq, ok1 := splitObject(r)
	pns, pq, ok2 := splitObject(p)
	return ok1 && ok2 && match(pns, rns) && match(pq, rq)
}

func splitObject(o string) (ns, q string, ok bool) {
	rest, ok := strings.CutPrefix(o, "ns/")
	if !ok {
		return "", "", false
	}
	return strings.Cut(rest, "/queue/")
}

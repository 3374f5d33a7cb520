package tenancy

import (
	"fmt"

	"github.com/casbin/casbin/v2"
	"github.com/casbin/casbin/v2/model"
)

// RBACModel is the one casbin model of Jobbie. Requests are
// (role, tenant, object, action); objects are "ns/<namespace>"; policies
// may use "*" for the tenant and keyMatch patterns for objects and
// actions. The role definition g is there for roles that inherit from the
// built-in ones; no such roles exist yet.
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
m = (r.sub == p.sub || g(r.sub, p.sub, r.dom)) && (p.dom == "*" || r.dom == p.dom) && keyMatch(r.obj, p.obj) && keyMatch(r.act, p.act)
`

// BuiltinPolicies grant each built-in role its actions in every tenant.
var BuiltinPolicies = [][]string{
	{"owner", "*", "*", "*"},
	{"admin", "*", "*", "*"},
	{"developer", "*", "*", "job.*"},
	{"developer", "*", "*", "queue.*"},
	{"developer", "*", "*", "schedule.*"},
	{"developer", "*", "*", "namespace.read"},
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
	{"billing", "*", "*", "usage.read"},
	{"billing", "*", "*", "namespace.read"},
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
	for _, p := range BuiltinPolicies {
		if _, err := e.AddPolicy(p[0], p[1], p[2], p[3]); err != nil {
			return nil, fmt.Errorf("tenancy: rbac policy %v: %w", p, err)
		}
	}
	return e, nil
}

// NamespaceObject is the RBAC object of a namespace.
func NamespaceObject(ns string) string { return "ns/" + ns }

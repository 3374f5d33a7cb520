package tenancy

import (
	"fmt"
	"slices"
	"strings"
)

// A custom role is a tenant's own set of permissions. Each permission
// grants some actions on the queues matching some patterns in the
// namespaces matching others; a role holds the union of its permissions.
//
// Patterns, for actions, namespaces and queues alike: "*" (all), an exact
// name, or a prefix ending in "*" ("emails.*" matches "emails.send" and
// "emails.bounce", not "emails"; "job.*" every job action). A permission
// whose queues are not all ("*") grants only actions on those queues: a
// namespace-wide action (listing keys, managing the namespace) needs
// queues ["*"].

// Permission is one grant of a custom role.
type Permission struct {
	Actions    []string `json:"actions"`
	Namespaces []string `json:"namespaces"`
	Queues     []string `json:"queues"`
}

// Limits of a custom role.
const (
	MaxPermissions     = 64
	MaxPatternsPerList = 64
)

// AllActions is the action vocabulary, for documentation and validation.
var AllActions = []Action{
	ActJobEnqueue, ActJobWork, ActJobRead, ActJobManage,
	ActQueueRead, ActQueueManage, ActScheduleRead, ActScheduleManage,
	ActNamespaceRead, ActNamespaceManage, ActKeyRead, ActKeyManage, ActUsageRead,
	ActBackupRead, ActBackupManage, ActWebhookRead, ActWebhookManage, ActAuditRead,
	ActEncryptionManage,
}

// FieldError is a validation error naming the field at fault
// ("permissions[2].queues[0]"), for callers that answer 400 with it.
type FieldError struct {
	Field string
	Msg   string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Msg }

// ValidateRoleName checks a custom role's name: a lowercase label that is
// not a built-in role's.
func ValidateRoleName(name string) error {
	if !isLabel(name) {
		return &FieldError{"name", fmt.Sprintf("role name %q must be 1-63 lowercase letters, digits or '-', starting with a letter or digit", name)}
	}
	if IsBuiltinRole(name) {
		return &FieldError{"name", fmt.Sprintf("%q is a built-in role", name)}
	}
	return nil
}

// IsBuiltinRole reports whether name is a built-in role (operator included).
func IsBuiltinRole(name string) bool {
	return slices.Contains(TenantRoles, Role(name)) || Role(name) == RoleOperator
}

// ValidatePermissions checks a custom role's permissions.
func ValidatePermissions(ps []Permission) error {
	if len(ps) == 0 {
		return &FieldError{"permissions", "a role needs at least one permission"}
	}
	if len(ps) > MaxPermissions {
		return &FieldError{"permissions", fmt.Sprintf("a role has at most %d permissions", MaxPermissions)}
	}
	for i, p := range ps {
		at := fmt.Sprintf("permissions[%d]", i)
		lists := []struct {
			name  string
			pats  []string
			check func(string) bool
		}{
			{"actions", p.Actions, validActionPattern},
			{"namespaces", p.Namespaces, func(s string) bool { return isLabel(strings.TrimSuffix(s, "*")) || s == "*" }},
			{"queues", p.Queues, func(s string) bool { return queueRE.MatchString(strings.TrimSuffix(s, "*")) || s == "*" }},
		}
		for _, l := range lists {
			if len(l.pats) == 0 {
				return &FieldError{at + "." + l.name, "at least one pattern is required (\"*\" for all)"}
			}
			if len(l.pats) > MaxPatternsPerList {
				return &FieldError{at + "." + l.name, fmt.Sprintf("at most %d patterns", MaxPatternsPerList)}
			}
			for j, s := range l.pats {
				if strings.Count(s, "*") > 1 || (strings.Contains(s, "*") && !strings.HasSuffix(s, "*")) || !l.check(s) {
					field := fmt.Sprintf("%s.%s[%d]", at, l.name, j)
					if l.name == "actions" {
						return &FieldError{field, unknownAction(s)}
					}
					return &FieldError{field, fmt.Sprintf("%q is not a name, a prefix ending in \"*\", or \"*\"", s)}
				}
			}
		}
	}
	return nil
}

// unknownAction says why s names no action, and lists the ones there are:
// a newcomer guessing "job.delete" learns it is job.manage's.
func unknownAction(s string) string {
	names := make([]string, len(AllActions))
	for i, a := range AllActions {
		names[i] = string(a)
	}
	return fmt.Sprintf("unknown action %q: the actions are %s, a prefix of them ending in \"*\" (\"job.*\"), or \"*\"",
		s, strings.Join(names, ", "))
}

func validActionPattern(s string) bool {
	if s == "*" {
		return true
	}
	for _, a := range AllActions {
		if match(s, string(a)) {
			return true // an action, or a prefix naming at least one
		}
	}
	return false
}

// match reports whether name matches pattern: "*", an exact name, or a
// prefix ending in "*".
func match(pattern, name string) bool {
	if p, ok := strings.CutSuffix(pattern, "*"); ok {
		return strings.HasPrefix(name, p)
	}
	return pattern == name
}

// covers reports whether everything pattern want matches, held matches.
func covers(held, want string) bool {
	if h, ok := strings.CutSuffix(held, "*"); ok {
		return strings.HasPrefix(strings.TrimSuffix(want, "*"), h)
	}
	return held == want
}

// BuiltinPermissions are a built-in role's grants as permissions, over
// every namespace and queue (a key's own namespaces narrow them).
func BuiltinPermissions(r Role) []Permission {
	var out []Permission
	for _, p := range BuiltinPolicies {
		if p[0] == string(r) {
			out = append(out, Permission{Actions: []string{p[3]}, Namespaces: []string{"*"}, Queues: []string{"*"}})
		}
	}
	return out
}

// Uncovered returns the first grant of want that held does not cover, as
// "action in namespace/queue", or "" when held covers all of want. A key
// may only grant (in a role it defines, or a key it mints) what it holds.
func Uncovered(held, want []Permission) string {
	for _, w := range want {
		for _, a := range w.Actions {
			for _, ns := range w.Namespaces {
				for _, q := range w.Queues {
					if !coveredBy(held, a, ns, q) {
						return fmt.Sprintf("%s in %s/%s", a, ns, q)
					}
				}
			}
		}
	}
	return ""
}

func coveredBy(held []Permission, a, ns, q string) bool {
	for _, h := range held {
		if slices.ContainsFunc(h.Actions, func(p string) bool { return covers(p, a) }) &&
			slices.ContainsFunc(h.Namespaces, func(p string) bool { return covers(p, ns) }) &&
			slices.ContainsFunc(h.Queues, func(p string) bool { return covers(p, q) }) {
			return true
		}
	}
	return false
}

// RolePolicies are the casbin policies of a tenant's custom role: one per
// action, namespace and queue pattern.
func RolePolicies(tenant, role string, ps []Permission) [][]string {
	var out [][]string
	for _, p := range ps {
		for _, a := range p.Actions {
			for _, ns := range p.Namespaces {
				for _, q := range p.Queues {
					out = append(out, []string{role, tenant, QueueObject(ns, q), a})
				}
			}
		}
	}
	return out
}

// MatchPattern reports whether name matches pattern: "*" (every name), an
// exact name, or a prefix ending in "*" ("emails.*" matches "emails.send",
// not "emails").
func MatchPattern(pattern, name string) bool { return match(pattern, name) }

// QueueScope is the set of queues one request may act on: the queue
// patterns a custom role grants for the request's action and namespace.
// The gateway sends it to the shard as wire.QueueScopeHeader (Header);
// the shard parses it back (ParseQueueScope).
//
// The zero value is every queue (a built-in role, or a role granting
// "*"): Allows answers without looking at any pattern. A limited scope
// with no patterns allows no queue.
type QueueScope struct {
	limited  bool
	patterns []string
}

// AllQueues is the scope of every queue (the zero value).
func AllQueues() QueueScope { return QueueScope{} }

// NewQueueScope is the scope of the queues matching any of patterns;
// "*" among them makes it every queue, none makes it no queue.
func NewQueueScope(patterns ...string) QueueScope {
	if slices.Contains(patterns, "*") {
		return QueueScope{}
	}
	return QueueScope{limited: true, patterns: slices.Clone(patterns)}
}

// ParseQueueScope reads a wire.QueueScopeHeader value: comma-separated
// queue patterns (queue names never hold a comma). Blanks around a
// pattern and empty items are ignored, so "" is no queue.
func ParseQueueScope(header string) QueueScope {
	var ps []string
	for p := range strings.SplitSeq(header, ",") {
		if p = strings.TrimSpace(p); p != "" {
			ps = append(ps, p)
		}
	}
	if slices.Contains(ps, "*") {
		return QueueScope{}
	}
	return QueueScope{limited: true, patterns: ps}
}

// QueueScopeFor is the scope a holder of ps has for action in namespace
// ns: the union of the queue patterns of every permission granting that
// action there. Holding no such permission is no queue, and so is an
// owner-only action (OwnerOnly): only the built-in owner holds one.
func QueueScopeFor(ps []Permission, action Action, ns string) QueueScope {
	if OwnerOnly[action] {
		return NewQueueScope()
	}
	var queues []string
	for _, p := range ps {
		if slices.ContainsFunc(p.Actions, func(a string) bool { return match(a, string(action)) }) &&
			slices.ContainsFunc(p.Namespaces, func(n string) bool { return match(n, ns) }) {
			queues = append(queues, p.Queues...)
		}
	}
	slices.Sort(queues)
	return NewQueueScope(slices.Compact(queues)...)
}

// All reports whether s is every queue.
func (s QueueScope) All() bool { return !s.limited }

// Allows reports whether s holds queue.
func (s QueueScope) Allows(queue string) bool {
	if !s.limited {
		return true
	}
	for _, p := range s.patterns {
		if match(p, queue) {
			return true
		}
	}
	return false
}

// Covers reports whether every queue pattern matches is in s ("emails.*"
// covers "emails.send" and "emails.send.*").
func (s QueueScope) Covers(pattern string) bool {
	return !s.limited || slices.ContainsFunc(s.patterns, func(h string) bool { return covers(h, pattern) })
}

// Patterns are s's queue patterns: ["*"] for every queue, empty for none.
func (s QueueScope) Patterns() []string {
	if !s.limited {
		return []string{"*"}
	}
	return slices.Clone(s.patterns)
}

// Header is s as the value of wire.QueueScopeHeader. A request with every
// queue sends no header at all (ok false); "" with ok true is no queue.
func (s QueueScope) Header() (value string, ok bool) {
	if !s.limited {
		return "", false
	}
	return strings.Join(s.patterns, ","), true
}

// String is s for logs and messages: its patterns, "*" for every queue.
func (s QueueScope) String() string {
	if !s.limited {
		return "*"
	}
	return strings.Join(s.patterns, ",")
}

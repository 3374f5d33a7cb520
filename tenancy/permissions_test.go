package tenancy

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

func perm(actions, namespaces, queues []string) Permission {
	return Permission{Actions: actions, Namespaces: namespaces, Queues: queues}
}

func TestValidatePermissions(t *testing.T) {
	ok := []Permission{
		perm([]string{"job.read", "job.manage"}, []string{"emails"}, []string{"emails.*"}),
		perm([]string{"*"}, []string{"*"}, []string{"*"}),
		perm([]string{"job.*", "queue.read"}, []string{"prod-*"}, []string{"billing.charge"}),
	}
	require.NoError(t, ValidatePermissions(ok))

	for field, ps := range map[string][]Permission{
		"permissions":                  nil,
		"permissions[0].actions":       {perm(nil, []string{"*"}, []string{"*"})},
		"permissions[0].actions[1]":    {perm([]string{"job.read", "job.fly"}, []string{"*"}, []string{"*"})},
		"permissions[0].namespaces[0]": {perm([]string{"*"}, []string{"Emails"}, []string{"*"})},
		"permissions[1].queues[0]":     {ok[0], perm([]string{"*"}, []string{"*"}, []string{"a*b"})},
		"permissions[0].queues[1]":     {perm([]string{"*"}, []string{"*"}, []string{"ok", "**"})},
	} {
		err := ValidatePermissions(ps)
		var fe *FieldError
		require.True(t, errors.As(err, &fe), "%s: %v", field, err)
		require.Equal(t, field, fe.Field)
	}

	// A guessed action is called unknown and the real ones are listed.
	err := ValidatePermissions([]Permission{perm([]string{"job.delete"}, []string{"*"}, []string{"*"})})
	var fe *FieldError
	require.True(t, errors.As(err, &fe), "%v", err)
	require.Equal(t, "permissions[0].actions[0]", fe.Field)
	require.Contains(t, fe.Msg, `unknown action "job.delete"`)
	for _, a := range AllActions {
		require.Contains(t, fe.Msg, string(a))
	}

	require.NoError(t, ValidateRoleName("support"))
	for _, bad := range []string{"owner", "operator", "Support", "", "a/b"} {
		require.Error(t, ValidateRoleName(bad), bad)
	}
}

// A custom role limited to emails.* queues may act there and nowhere
// else; a namespace-wide action needs queues "*".
func TestCustomRoleEnforcement(t *testing.T) {
	e, err := NewEnforcer()
	require.NoError(t, err)
	support := []Permission{
		perm([]string{"job.read", "job.manage", "job.enqueue"}, []string{"emails"}, []string{"emails.*"}),
		perm([]string{"namespace.read"}, []string{"*"}, []string{"*"}),
	}
	for _, p := range RolePolicies("t_a", "support", support) {
		_, err := e.AddPolicy(p[0], p[1], p[2], p[3])
		require.NoError(t, err)
	}
	allow := func(tenant, ns, q, act string) bool {
		ok, err := e.Enforce("support", tenant, QueueObject(ns, q), act)
		require.NoError(t, err)
		return ok
	}
	require.True(t, allow("t_a", "emails", "emails.send", "job.enqueue"))
	require.True(t, allow("t_a", "emails", "emails.bounce", "job.manage"))
	require.False(t, allow("t_a", "emails", "billing.charge", "job.enqueue"), "outside the queue patterns")
	require.False(t, allow("t_a", "emails", "emails", "job.enqueue"), "emails.* does not match emails itself")
	require.False(t, allow("t_a", "other", "emails.send", "job.enqueue"), "outside the namespace patterns")
	require.False(t, allow("t_a", "emails", "emails.send", "job.work"), "an action not granted")
	require.False(t, allow("t_a", "emails", "*", "job.read"), "a namespace-wide read needs queues *")
	require.True(t, allow("t_a", "anything", "*", "namespace.read"))
	require.False(t, allow("t_b", "emails", "emails.send", "job.enqueue"), "another tenant's role of the same name")

	// Built-in roles still hold everywhere, for any queue.
	ok, err := e.Enforce("developer", "t_b", QueueObject("x", "billing.charge"), "job.manage")
	require.NoError(t, err)
	require.True(t, ok)
	ok, err = e.Enforce("producer", "t_b", NamespaceObject("x"), "queue.manage")
	require.NoError(t, err)
	require.False(t, ok)
}

// A holder may grant only what it holds, pattern by pattern.
func TestUncovered(t *testing.T) {
	held := []Permission{
		perm([]string{"job.*"}, []string{"emails"}, []string{"emails.*"}),
		perm([]string{"queue.read"}, []string{"*"}, []string{"*"}),
	}
	for _, want := range [][]Permission{
		{perm([]string{"job.read"}, []string{"emails"}, []string{"emails.send"})},
		{perm([]string{"job.read", "job.manage"}, []string{"emails"}, []string{"emails.send.*"})},
		{perm([]string{"queue.read"}, []string{"prod-*"}, []string{"*"})},
	} {
		require.Empty(t, Uncovered(held, want), "%+v", want)
	}
	for want, gap := range map[*Permission]string{
		{Actions: []string{"job.read"}, Namespaces: []string{"emails"}, Queues: []string{"*"}}:            "job.read in emails/*",
		{Actions: []string{"job.read"}, Namespaces: []string{"*"}, Queues: []string{"emails.x"}}:          "job.read in */emails.x",
		{Actions: []string{"queue.manage"}, Namespaces: []string{"emails"}, Queues: []string{"emails.x"}}: "queue.manage in emails/emails.x",
		{Actions: []string{"*"}, Namespaces: []string{"emails"}, Queues: []string{"emails.x"}}:            "* in emails/emails.x",
		{Actions: []string{"job.read"}, Namespaces: []string{"emails"}, Queues: []string{"emails*"}}:      "job.read in emails/emails*",
	} {
		require.Equal(t, gap, Uncovered(held, []Permission{*want}))
	}
	// An owner holds everything.
	require.Empty(t, Uncovered(BuiltinPermissions(RoleOwner), []Permission{perm([]string{"*"}, []string{"*"}, []string{"*"})}))
	require.Equal(t, "job.manage in */*", Uncovered(BuiltinPermissions(RoleProducer), []Permission{perm([]string{"job.manage"}, []string{"*"}, []string{"*"})}))
}

func TestObjectMatch(t *testing.T) {
	for _, c := range []struct {
		r, p string
		want bool
	}{
		{"ns/a/queue/q", "*", true},
		{"ns/a/queue/q", "ns/*/queue/*", true},
		{"ns/a/queue/*", "ns/a/queue/*", true},
		{"ns/a/queue/*", "ns/a/queue/q*", false},
		{"ns/ab/queue/q.1", "ns/a*/queue/q.*", true},
		{"ns/b/queue/q.1", "ns/a*/queue/q.*", false},
		{"ns/a", "ns/*/queue/*", false},
	} {
		require.Equal(t, c.want, ObjectMatch(c.r, c.p), "%s vs %s", c.r, c.p)
	}
}

func TestMatchPattern(t *testing.T) {
	for _, c := range []struct {
		pattern, name string
		want          bool
	}{
		{"*", "anything", true},
		{"emails.send", "emails.send", true},
		{"emails.send", "emails.sender", false},
		{"emails.*", "emails.send", true},
		{"emails.*", "emails", false},
		{"emails*", "emails", true},
		{"a*b", "a*b", true}, // a "*" inside is no wildcard (ValidatePermissions refuses it)
		{"a*b", "axb", false},
	} {
		require.Equal(t, c.want, MatchPattern(c.pattern, c.name), "%s vs %s", c.pattern, c.name)
	}
}

func TestQueueScope(t *testing.T) {
	var zero QueueScope
	require.True(t, zero.All(), "the zero value is every queue")
	require.True(t, zero.Allows("anything"))
	require.True(t, zero.Covers("x.*"))
	_, ok := zero.Header()
	require.False(t, ok, "every queue sends no header")
	require.Equal(t, []string{"*"}, zero.Patterns())

	s := ParseQueueScope(" emails.* , billing.charge,,")
	require.False(t, s.All())
	require.Equal(t, []string{"emails.*", "billing.charge"}, s.Patterns())
	require.True(t, s.Allows("emails.send"))
	require.True(t, s.Allows("billing.charge"))
	require.False(t, s.Allows("emails"))
	require.False(t, s.Allows("billing.refund"))
	require.True(t, s.Covers("emails.send.*"))
	require.True(t, s.Covers("billing.charge"))
	require.False(t, s.Covers("billing.*"))
	require.False(t, s.Covers("*"))
	h, ok := s.Header()
	require.True(t, ok)
	require.Equal(t, "emails.*,billing.charge", h)
	require.Equal(t, s, ParseQueueScope(h), "a header reads back as it was sent")

	none := ParseQueueScope("")
	require.False(t, none.All())
	require.False(t, none.Allows("q"))
	require.False(t, none.Covers("q"))
	h, ok = none.Header()
	require.True(t, ok, "no queue still sends the header, empty")
	require.Empty(t, h)
	require.Equal(t, none, NewQueueScope())

	require.True(t, ParseQueueScope("a,*").All(), `"*" among the patterns is every queue`)
	require.True(t, NewQueueScope("*").All())
}

// The scope a custom role sends is the union of its queue patterns for
// the request's action and namespace.
func TestQueueScopeFor(t *testing.T) {
	support := []Permission{
		perm([]string{"job.read", "job.manage"}, []string{"emails"}, []string{"emails.*"}),
		perm([]string{"job.*"}, []string{"prod-*"}, []string{"billing.charge", "emails.*"}),
		perm([]string{"queue.read"}, []string{"*"}, []string{"*"}),
	}
	require.Equal(t, []string{"emails.*"}, QueueScopeFor(support, ActJobManage, "emails").Patterns())
	require.Equal(t, []string{"billing.charge", "emails.*"}, QueueScopeFor(support, ActJobRead, "prod-eu").Patterns())
	require.True(t, QueueScopeFor(support, ActQueueRead, "emails").All())
	none := QueueScopeFor(support, ActJobWork, "emails")
	require.False(t, none.All())
	require.Empty(t, none.Patterns(), "no permission for the action: no queue")
	require.True(t, QueueScopeFor(BuiltinPermissions(RoleDeveloper), ActJobManage, "x").All(), "a built-in role: every queue")
}

func BenchmarkQueueScopeAllows(b *testing.B) {
	b.Run("every_queue", func(b *testing.B) {
		var s QueueScope
		b.ReportAllocs()
		for b.Loop() {
			if !s.Allows("emails.send") {
				b.Fatal("refused")
			}
		}
	})
	b.Run("three_patterns", func(b *testing.B) {
		s := ParseQueueScope("billing.*,reports.daily,emails.*")
		b.ReportAllocs()
		for b.Loop() {
			if !s.Allows("emails.send") {
				b.Fatal("refused")
			}
		}
	})
}

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

package gateway

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/tenancy"
)

func TestNarrowToAKeysNamespaces(t *testing.T) {
	t.Parallel()
	p := func(nss ...string) tenancy.Permission {
		return tenancy.Permission{Actions: []string{"job.read"}, Namespaces: nss, Queues: []string{"*"}}
	}
	ps := []tenancy.Permission{p("*"), p("emails"), p("prod-*"), p("sms")}
	require.Equal(t, ps, narrow(ps, []string{"*"}), "every namespace: as it is")
	require.Equal(t, []tenancy.Permission{p("emails", "prod-eu"), p("emails"), p("prod-eu")}, narrow(ps, []string{"emails", "prod-eu"}))
	require.Empty(t, narrow(ps[1:], []string{"default"}))
	require.Equal(t, []tenancy.Permission{p("*"), p("emails"), p("prod-*"), p("sms")}, ps, "the role is left as it was")
}

func TestRoleSetDecisionsAreItsOwn(t *testing.T) {
	t.Parallel()
	old := newRoleSet(tenantA, wireRoles(1, "support", perm([]string{"job.read"}, []string{"emails"}, []string{"emails.*"})))
	cur := newRoleSet(tenantA, wireRoles(2, "support", perm([]string{"job.read"}, []string{"emails"}, []string{"*"})))
	for range 2 {
		ok, err := old.allowed("support", "emails", "*", tenancy.ActJobRead)
		require.NoError(t, err)
		require.False(t, ok, "queues emails.* are not the namespace as a whole")
		ok, err = old.allowed("support", "emails", "emails.send", tenancy.ActJobRead)
		require.NoError(t, err)
		require.True(t, ok)
		ok, err = cur.allowed("support", "emails", "*", tenancy.ActJobRead)
		require.NoError(t, err)
		require.True(t, ok, "a new version decides anew")
		ok, err = cur.allowed("support", "default", "*", tenancy.ActJobRead)
		require.NoError(t, err)
		require.False(t, ok)
	}
	require.Equal(t, queueScope{header: "emails.*", limited: true}, old.scope("support", "emails", tenancy.ActJobRead))
	require.True(t, old.scope("support", "emails", tenancy.ActJobWork).none())
	require.Equal(t, queueScope{}, cur.scope("support", "emails", tenancy.ActJobRead), "every queue: no header")
}

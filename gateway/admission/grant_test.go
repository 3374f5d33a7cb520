package admission

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/gateway/admitted"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
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
		ok, err := old.Allowed("support", "emails", "*", tenancy.ActJobRead)
		require.NoError(t, err)
		require.False(t, ok, "queues emails.* are not the namespace as a whole")
		ok, err = old.Allowed("support", "emails", "emails.send", tenancy.ActJobRead)
		require.NoError(t, err)
		require.True(t, ok)
		ok, err = cur.Allowed("support", "emails", "*", tenancy.ActJobRead)
		require.NoError(t, err)
		require.True(t, ok, "a new version decides anew")
		ok, err = cur.Allowed("support", "default", "*", tenancy.ActJobRead)
		require.NoError(t, err)
		require.False(t, ok)
	}
	require.Equal(t, admitted.Scope{Header: "emails.*", Limited: true}, old.Scope("support", "emails", tenancy.ActJobRead))
	require.True(t, old.Scope("support", "emails", tenancy.ActJobWork).None())
	require.Equal(t, admitted.Scope{}, cur.Scope("support", "emails", tenancy.ActJobRead), "every queue: no header")
}

const tenantA = "t_01hx7y2k3m0000000000000000"

func perm(actions, nss, queues []string) wire.Permission {
	return wire.Permission{Actions: actions, Namespaces: nss, Queues: queues}
}

// wireRoles is control's answer with one role at version.
func wireRoles(version uint64, name string, ps ...wire.Permission) wire.TenantRoles {
	return wire.TenantRoles{Version: version, Roles: []wire.Role{{Name: name, Permissions: ps}}}
}

package tenancy

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// encryption.manage can make a namespace's data unreadable for good: the
// owner holds it, and no other role does, even one whose policies grant
// every action.
func TestEncryptionManageIsTheOwnersAlone(t *testing.T) {
	t.Parallel()
	e, err := NewEnforcer()
	require.NoError(t, err)
	for _, role := range TenantRoles {
		got, err := e.Enforce(string(role), "t_x", NamespaceObject("default"), string(ActEncryptionManage))
		require.NoError(t, err)
		require.Equal(t, role == RoleOwner, got, "%s encryption.manage", role)
	}
	_, err = e.AddPolicy("keymaster", "t_x", "*", "*")
	require.NoError(t, err)
	got, err := e.Enforce("keymaster", "t_x", NamespaceObject("default"), string(ActEncryptionManage))
	require.NoError(t, err)
	require.False(t, got, "a custom role granted every action")
	got, err = e.Enforce("keymaster", "t_x", NamespaceObject("default"), string(ActNamespaceManage))
	require.NoError(t, err)
	require.True(t, got, "the custom role's other actions stand")
}

// A custom role's scope (the gateway's decision for routes about queues)
// holds no queue for an owner-only action, whatever the role grants.
func TestOwnerOnlyActionsScopeNoQueue(t *testing.T) {
	t.Parallel()
	all := []Permission{{Actions: []string{"*"}, Namespaces: []string{"*"}, Queues: []string{"*"}}}
	named := []Permission{{Actions: []string{string(ActEncryptionManage)}, Namespaces: []string{"*"}, Queues: []string{"*"}}}
	for _, ps := range [][]Permission{all, named} {
		sc := QueueScopeFor(ps, ActEncryptionManage, "default")
		require.False(t, sc.All(), "%v", ps)
		require.Empty(t, sc.Patterns(), "%v", ps)
	}
	require.True(t, QueueScopeFor(all, ActNamespaceManage, "default").All(), "the role's other actions stand")
}

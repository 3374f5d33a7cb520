package tenancy

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// sso.manage is the owner's alone: admin holds every action but it, and
// a custom role granted it (or "*") holds it not.
func TestOwnerOnlyAction(t *testing.T) {
	t.Parallel()
	e, err := NewEnforcer()
	require.NoError(t, err)
	for _, p := range RolePolicies("t_a", "everything", []Permission{perm([]string{"*"}, []string{"*"}, []string{"*"})}) {
		_, err := e.AddPolicy(p[0], p[1], p[2], p[3])
		require.NoError(t, err)
	}
	allow := func(role, act string) bool {
		ok, err := e.Enforce(role, "t_a", NamespaceObject("default"), act)
		require.NoError(t, err)
		return ok
	}
	require.True(t, allow("owner", string(ActSSOManage)))
	require.False(t, allow("admin", string(ActSSOManage)))
	require.False(t, allow("everything", string(ActSSOManage)))
	require.True(t, allow("admin", string(ActKeyManage)), "admin keeps every other action")
	require.True(t, allow("everything", string(ActKeyManage)))
}

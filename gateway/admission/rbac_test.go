package admission

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/tenancy"
)

func TestAuthorizerCachesDecisions(t *testing.T) {
	t.Parallel()
	z, err := newAuthorizer(4)
	require.NoError(t, err)
	for range 2 {
		ok, err := z.allowed(tenancy.RoleWorker, tenantA, "default", tenancy.ActJobWork)
		require.NoError(t, err)
		require.True(t, ok)
		ok, err = z.allowed(tenancy.RoleWorker, tenantA, "default", tenancy.ActJobEnqueue)
		require.NoError(t, err)
		require.False(t, ok)
	}
	require.Equal(t, 2, z.decisions.Len())
	for _, ns := range []string{"a", "b", "c", "d", "e"} {
		_, err := z.allowed(tenancy.RoleViewer, tenantA, ns, tenancy.ActJobRead)
		require.NoError(t, err)
	}
	require.LessOrEqual(t, z.decisions.Len(), 4, "the cache must stay bounded")
}

package gateway

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/tenancy"
)

// Changing a namespace's encryption (its tenant key among it) is the
// owner's alone: an admin, which holds every other action, is refused
// before any shard sees it; any role that reads the namespace may look.
func TestEncryptionChangesAreTheOwnersAlone(t *testing.T) {
	t.Parallel()
	b := setup(t)
	body := map[string]any{"enabled": true}
	for _, role := range []tenancy.Role{tenancy.RoleAdmin, tenancy.RoleDeveloper, tenancy.RoleViewer} {
		r := b.do(t, http.MethodPut, "/api/v1/encryption", b.key(t, role, "default"), body)
		r.requireError(t, http.StatusForbidden, apierr.Forbidden)
	}
	// A custom role granted every action, or this one by name, on every
	// queue of every namespace: refused too.
	b.control.SetRole(tenantA, "everything", perm([]string{"*"}, []string{"*"}, []string{"*"}))
	b.control.SetRole(tenantA, "keymaster", perm([]string{"encryption.manage"}, []string{"*"}, []string{"*"}))
	for _, role := range []string{"everything", "keymaster"} {
		r := b.do(t, http.MethodPut, "/api/v1/encryption", b.customKey(t, role, "default"), body)
		r.requireError(t, http.StatusForbidden, apierr.Forbidden)
	}
	require.Equal(t, http.StatusCreated, b.do(t, http.MethodPut, "/api/v1/encryption", b.key(t, tenancy.RoleOwner, "default"), body).status,
		"the owner's change reaches the shard (the fake answers 201)")
	require.Equal(t, http.StatusCreated, b.do(t, http.MethodGet, "/api/v1/encryption", b.key(t, tenancy.RoleViewer, "default"), nil).status)
}

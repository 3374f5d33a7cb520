package gateway

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// The console's schedule preview and cluster health reach the namespace's
// shard as sent, under the read permission of what they show.
func TestConsoleAPIRoutesAreProxied(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.shard.setHandler(func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"ok": true})
	})
	viewer := b.key(t, tenancy.RoleViewer, "default")

	r := b.do(t, "POST", "/api/v1/schedules/preview", viewer, map[string]any{"cron": "@hourly", "count": 2})
	require.Equal(t, 200, r.status, string(r.body))
	got := b.shard.last(t)
	require.Equal(t, "POST", got.Method)
	require.Equal(t, "/api/v1/schedules/preview", got.URI)
	require.JSONEq(t, `{"cron":"@hourly","count":2}`, got.Body)
	require.Equal(t, tenantA+"/default", got.Header.Get(wire.ShardNamespaceHeader))

	r = b.do(t, "GET", "/api/v1/cluster", viewer, nil)
	require.Equal(t, 200, r.status, string(r.body))
	require.Equal(t, "/api/v1/cluster", b.shard.last(t).URI)

	billing := b.key(t, tenancy.RoleBilling, "default")
	b.do(t, "GET", "/api/v1/cluster", billing, nil).requireError(t, 403, apierr.Forbidden)
	b.do(t, "POST", "/api/v1/schedules/preview", billing, map[string]any{"cron": "@hourly"}).requireError(t, 403, apierr.Forbidden)
}

package e2e

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/tenancy"
)

// Alert rules through the gateway: a tenant's rules are its own (another
// tenant's key finds none and changes none), a viewer reads them and
// cannot change them, and a bad rule is refused naming its field.
func TestAlertRulesThroughTheGateway(t *testing.T) {
	t.Parallel()
	a, ctA := shared.tenant(t)
	_, ctB := shared.tenant(t)
	g := shared.gateway + "/api/v1"
	rule := map[string]any{"name": "backlog", "kind": "queue_depth_above", "queue": "emails", "threshold": 100, "for": "5m"}

	r := call(t, "POST", g+"/alerts", ctA.OwnerKey, rule)
	require.Equal(t, 201, r.Status, string(r.Raw))
	require.Equal(t, "ok", r.Body["state"])

	for _, c := range []struct{ method, path string }{{"GET", "/alerts/backlog"}, {"PUT", "/alerts/backlog"}, {"DELETE", "/alerts/backlog"}} {
		r = call(t, c.method, g+c.path, ctB.OwnerKey, rule)
		require.Equal(t, 404, r.Status, "%s %s: %s", c.method, c.path, r.Raw)
	}
	r = call(t, "GET", g+"/alerts", ctB.OwnerKey, nil)
	require.Equal(t, 200, r.Status)
	require.Empty(t, r.Body["alerts"], "another tenant sees none")

	viewer, err := a.CreateKey(ctx(t), clientKey("v", tenancy.RoleViewer, "default"))
	require.NoError(t, err)
	r = call(t, "GET", g+"/alerts/backlog", viewer.Token, nil)
	require.Equal(t, 200, r.Status, string(r.Raw))
	r = call(t, "DELETE", g+"/alerts/backlog", viewer.Token, nil)
	require.Equal(t, 403, r.Status, string(r.Raw))

	bad := map[string]any{"name": "rate", "kind": "failure_rate_above", "threshold": 150, "for": "5m"}
	r = call(t, "POST", g+"/alerts", ctA.OwnerKey, bad)
	require.Equal(t, 400, r.Status, string(r.Raw))
	require.Equal(t, "threshold", r.Body["error"].(map[string]any)["field"])

	r = call(t, "GET", g+"/alerts", ctA.OwnerKey, nil)
	require.Len(t, r.Body["alerts"], 1, "the refused rule was not stored")
	r = call(t, "DELETE", g+"/alerts/backlog", ctA.OwnerKey, nil)
	require.Equal(t, 204, r.Status, string(r.Raw))
}

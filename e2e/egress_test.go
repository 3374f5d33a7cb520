package e2e

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// A namespace's egress allow-list through the gateway to its shard: set
// and read back; a bad entry is a 400 naming it; a push queue or webhook
// off the list is a 400 naming push.url / url and nothing is created;
// another tenant's namespace is not found, and its own list is its own.
func TestNamespaceEgressThroughGateway(t *testing.T) {
	t.Parallel()
	_, ctA := shared.tenant(t)
	_, ctB := shared.tenant(t)
	a, b := ctA.OwnerKey, ctB.OwnerKey
	g := shared.gateway + "/api/v1"
	egress := g + "/namespaces/default/egress"

	r := call(t, "PUT", egress, a, map[string]any{"egress_allow": []string{"hooks.example.com", "*.example.net"}})
	require.Equal(t, 200, r.Status, string(r.Raw))
	require.Equal(t, []any{"hooks.example.com", "*.example.net"}, r.Body["egress_allow"])
	r = call(t, "GET", egress, a, nil)
	require.Equal(t, 200, r.Status, string(r.Raw))
	require.Equal(t, []any{"hooks.example.com", "*.example.net"}, r.Body["egress_allow"])

	r = call(t, "PUT", egress, a, map[string]any{"egress_allow": []string{"ok.example.com", "no such host"}})
	require.Equal(t, 400, r.Status, string(r.Raw))
	require.Equal(t, "egress_allow[1]", r.field())

	r = call(t, "PUT", g+"/queues/hooks", a, map[string]any{"push": map[string]any{"url": "https://evil.example.org/jobs"}})
	require.Equal(t, 400, r.Status, string(r.Raw))
	require.Equal(t, "push.url", r.field())
	require.Contains(t, string(r.Raw), "egress allow-list")
	require.Equal(t, 404, call(t, "GET", g+"/queues/hooks", a, nil).Status, "nothing was created")
	r = call(t, "POST", g+"/webhooks", a, map[string]any{"url": "https://evil.example.org/h", "events": []string{"*"}})
	require.Equal(t, 400, r.Status, string(r.Raw))
	require.Equal(t, "url", r.field())

	// B's namespace of the same name has its own list (none).
	r = call(t, "GET", egress, b, nil)
	require.Equal(t, 200, r.Status, string(r.Raw))
	require.Equal(t, []any{}, r.Body["egress_allow"])
	require.Equal(t, 404, call(t, "GET", g+"/namespaces/nope/egress", b, nil).Status)

	r = call(t, "PUT", egress, a, map[string]any{"egress_allow": nil})
	require.Equal(t, 200, r.Status, string(r.Raw))
	require.Equal(t, []any{}, r.Body["egress_allow"])
}

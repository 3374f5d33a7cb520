package shard

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// A namespace's OTLP endpoint on its shard: set and read back through
// /api/v1/tracing, kept when another setting changes, held to the egress
// allow-list and the outbound rules; bad input is a 400 naming
// otlp_endpoint and changes nothing; a limited queue scope is refused;
// null clears it.
func TestNamespaceOTLPEndpoint(t *testing.T) {
	b := setup(t, allowPrivate)
	held := func() string {
		t.Helper()
		r := b.call("GET", "/api/v1/tracing", nil)
		require.Equal(t, 200, r.Status, string(r.Raw))
		return r.Body["otlp_endpoint"].(string)
	}
	require.Equal(t, "", held())
	url := "https://localhost:4318/v1/traces"
	r := b.call("PUT", "/api/v1/tracing", map[string]any{"otlp_endpoint": "https://127.0.0.1:4318/v1/traces"})
	require.Equal(t, 200, r.Status, string(r.Raw))
	require.Equal(t, "https://127.0.0.1:4318/v1/traces", held(), "the operator allows private addresses here")

	// Another setting's change keeps it; the egress list it must pass.
	r = b.call("PUT", "/api/v1/namespace", map[string]any{"retention": "1h"})
	require.Equal(t, 200, r.Status, string(r.Raw))
	require.Equal(t, "https://127.0.0.1:4318/v1/traces", r.Body["otlp_endpoint"])
	r = b.call("PUT", "/api/v1/namespace", map[string]any{"egress_allow": []string{"localhost"}, "otlp_endpoint": url})
	require.Equal(t, 200, r.Status, string(r.Raw))
	require.Equal(t, url, held())
	require.Equal(t, "1h", b.call("GET", "/api/v1/namespace", nil).Body["retention"], "the retention kept too")

	for _, bad := range []any{
		map[string]any{"otlp_endpoint": "https://127.0.0.1:4318/v1/traces"}, // off the allow-list
		map[string]any{"otlp_endpoint": "http://localhost:4318/v1/traces"},  // not https
		map[string]any{"otlp_endpoint": 5},
		map[string]any{},
	} {
		r = b.call("PUT", "/api/v1/tracing", bad)
		require.Equal(t, 400, r.Status, "%v: %s", bad, r.Raw)
		require.Equal(t, "otlp_endpoint", errField(r), "%v: %s", bad, r.Raw)
		require.Equal(t, url, held(), "a refused endpoint changes nothing")
	}
	r = b.withScope("emails.*").call("PUT", "/api/v1/tracing", map[string]any{"otlp_endpoint": nil})
	require.Equal(t, 403, r.Status, string(r.Raw))
	require.Equal(t, 403, b.withScope("emails.*").call("GET", "/api/v1/tracing", nil).Status)
	require.Equal(t, url, held())

	r = b.call("PUT", "/api/v1/tracing", map[string]any{"otlp_endpoint": nil})
	require.Equal(t, 200, r.Status, string(r.Raw))
	require.Equal(t, "", held())
	require.Equal(t, []any{"localhost"}, b.call("GET", "/api/v1/namespace", nil).Body["egress_allow"], "the egress list kept")
}

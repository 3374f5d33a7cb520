package shard

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// A node's path asked with a method it does not serve is 405 with the
// methods it does in Allow, not a 404 saying there is no such endpoint.
func TestWrongMethodIs405WithAllow(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for _, tc := range []struct{ method, path, allow string }{
		{"GET", "/api/v1/enqueue", "POST"},
		{"PUT", "/api/v1/jobs/j1", "GET, HEAD, DELETE"},
		{"GET", "/internal/v1/snapshot", "POST"},
	} {
		r := b.call(tc.method, tc.path, nil)
		require.Equal(t, 405, r.Status, "%s %s: %s", tc.method, tc.path, r.Raw)
		require.Equal(t, "method_not_allowed", errCode(r), string(r.Raw))
		require.Equal(t, tc.allow, r.Header.Get("Allow"), "%s %s", tc.method, tc.path)
	}
	r := b.call("GET", "/api/v1/nowhere", nil)
	require.Equal(t, 404, r.Status, string(r.Raw))
}

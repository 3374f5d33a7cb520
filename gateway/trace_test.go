package gateway

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// An enqueue's W3C trace context headers reach the shard unchanged (which
// checks and stores them); a request without them sends none.
func TestTraceHeadersReachTheShard(t *testing.T) {
	t.Parallel()
	b := setup(t)
	owner := b.key(t, tenancy.RoleOwner, "*")
	const parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	const state = "congo=t61rcWkgMzE, rojo=00f067aa0ba902b7"
	batch := map[string]any{"jobs": []any{map[string]any{"queue": "q"}}}
	for _, rt := range []struct {
		path string
		body any
	}{{"/api/v1/enqueue", enqueueBody}, {"/api/v1/enqueue/batch", batch}} {
		r := b.do(t, http.MethodPost, rt.path, owner, rt.body, wire.TraceParentHeader, parent, wire.TraceStateHeader, state)
		require.Less(t, r.status, 300, "%s: %s", rt.path, r.body)
		got := b.shard.last(t)
		require.Equal(t, rt.path, got.URI)
		require.Equal(t, parent, got.Header.Get(wire.TraceParentHeader), rt.path)
		require.Equal(t, state, got.Header.Get(wire.TraceStateHeader), rt.path)

		r = b.do(t, http.MethodPost, rt.path, owner, rt.body)
		require.Less(t, r.status, 300, "%s: %s", rt.path, r.body)
		got = b.shard.last(t)
		require.Empty(t, got.Header.Values(wire.TraceParentHeader), rt.path)
		require.Empty(t, got.Header.Values(wire.TraceStateHeader), rt.path)
	}
}

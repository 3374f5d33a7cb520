package e2e

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/wire"
)

// Through the gateway to the shard: an enqueue's trace context headers are
// stored with the job and given back on fetch and read; a bad one is a
// 400 naming the header, and nothing is stored.
func TestTraceContextThroughTheGateway(t *testing.T) {
	t.Parallel()
	_, ct := shared.tenant(t)
	key, api := ct.OwnerKey, shared.gateway+"/api/v1"
	const parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	const state = "congo=t61rcWkgMzE"

	r := call(t, "POST", api+"/enqueue", key, map[string]any{"queue": "traced"}, wire.TraceParentHeader, "00-"+parent[3:35]+"-0000000000000000-01")
	require.Equal(t, 400, r.Status, string(r.Raw))
	require.Equal(t, "traceparent", r.field())
	r = call(t, "POST", api+"/enqueue/batch", key, map[string]any{"jobs": []any{map[string]any{"queue": "traced"},
		map[string]any{"queue": "traced", "tracestate": "a=1"}}})
	require.Equal(t, 400, r.Status, string(r.Raw))
	require.Equal(t, "jobs[1].tracestate", r.field())
	r = call(t, "POST", api+"/fetch", key, map[string]any{"queues": []string{"traced"}, "timeout": 0})
	require.Equal(t, 204, r.Status, "nothing was stored: %s", r.Raw)

	r = call(t, "POST", api+"/enqueue", key, map[string]any{"queue": "traced", "payload": map[string]any{"n": 1}},
		wire.TraceParentHeader, parent, wire.TraceStateHeader, state)
	require.Equal(t, 201, r.Status, string(r.Raw))
	id := r.Body["job_id"].(string)
	r = call(t, "POST", api+"/fetch", key, map[string]any{"queues": []string{"traced"}, "timeout": 0})
	require.Equal(t, 200, r.Status, string(r.Raw))
	require.Equal(t, id, r.Body["job_id"])
	require.Equal(t, parent, r.Body["traceparent"])
	require.Equal(t, state, r.Body["tracestate"])
	require.Equal(t, map[string]any{"n": 1.0}, r.Body["payload"])
	r = call(t, "GET", api+"/jobs/"+id, key, nil)
	require.Equal(t, 200, r.Status, string(r.Raw))
	require.Equal(t, parent, r.Body["traceparent"])
	require.Equal(t, state, r.Body["tracestate"])
}

package e2e

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/client"
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

// The Go SDK sends a job's trace context and gives it back on the fetched
// job, the worker's JobContext and the job's detail; a bad one is a 400
// naming it.
func TestTraceContextThroughTheSDK(t *testing.T) {
	t.Parallel()
	owner, _ := shared.tenant(t)
	const parent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	_, err := owner.Enqueue(ctx(t), client.EnqueueRequest{Queue: "traced.sdk", TraceParent: "00-zz"})
	require.True(t, client.IsBadRequest(err), "%v", err)
	var e *client.Error
	require.ErrorAs(t, err, &e)
	require.Equal(t, "traceparent", e.Field)

	res, err := owner.Enqueue(ctx(t), client.EnqueueRequest{Queue: "traced.sdk", Payload: 1, TraceParent: parent, TraceState: "vendor=x"})
	require.NoError(t, err)
	j, err := owner.Fetch(ctx(t), client.FetchRequest{Queues: []string{"traced.sdk"}, WorkerID: "w", Timeout: 5 * time.Second})
	require.NoError(t, err)
	require.NotNil(t, j)
	require.Equal(t, res.JobID, j.ID)
	require.Equal(t, parent, j.TraceParent)
	require.Equal(t, "vendor=x", j.TraceState)
	require.NoError(t, owner.Ack(ctx(t), j.ID, nil))
	d, err := owner.GetJob(ctx(t), res.JobID)
	require.NoError(t, err)
	require.Equal(t, parent, d.TraceParent)
	require.Equal(t, "vendor=x", d.TraceState)
}

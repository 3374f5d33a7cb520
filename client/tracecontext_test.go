package client_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/client"
)

// A batch sent with a trace context in ctx: each job and the callback
// that name none take it, one that names its own keeps it, and the
// caller's request is not changed.
func TestEnqueueBatchTakesTheContextsTrace(t *testing.T) {
	t.Parallel()
	const carried = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	const own = "00-11111111111111111111111111111111-2222222222222222-01"
	rec := newRecorder(t, http.StatusCreated, `{"job_ids":["a","b"]}`)
	c := rec.client(t)
	ctx := client.WithTraceParent(context.Background(), carried, "v=1")
	req := client.BatchRequest{Jobs: []client.EnqueueRequest{{Queue: "q"}, {Queue: "q", TraceParent: own}},
		Batch: &client.BatchOptions{CallbackQueue: "done"}}

	_, err := c.EnqueueBatch(ctx, req)
	require.NoError(t, err)
	rec.requireRequest(t, "POST", "/api/v1/enqueue/batch", `{"jobs":[
		{"queue":"q","traceparent":"`+carried+`","tracestate":"v=1"},
		{"queue":"q","traceparent":"`+own+`"}],
		"batch":{"callback_queue":"done","callback_payload":null,"traceparent":"`+carried+`","tracestate":"v=1"}}`)
	require.Empty(t, req.Jobs[0].TraceParent)
	require.Empty(t, req.Batch.TraceParent)

	_, err = c.EnqueueBatch(context.Background(), req)
	require.NoError(t, err)
	rec.requireRequest(t, "POST", "/api/v1/enqueue/batch", `{"jobs":[{"queue":"q"},{"queue":"q","traceparent":"`+own+`"}],
		"batch":{"callback_queue":"done","callback_payload":null}}`)
}

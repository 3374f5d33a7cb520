package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/client"
)

// traceID is a traceparent's trace id.
func traceID(traceparent string) string {
	parts := strings.Split(traceparent, "-")
	if len(parts) != 4 {
		return ""
	}
	return parts[1]
}

// A handler's ctx carries its job's trace context, so a job it enqueues
// without naming one continues the job's trace.
func TestTraceContextFromAHandler(t *testing.T) {
	t.Parallel()
	c, _ := shared.tenant(t)
	const parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	first, err := c.Enqueue(ctx(t), client.EnqueueRequest{Queue: "traced.first", Payload: 1, TraceParent: parent, TraceState: "congo=t61"})
	require.NoError(t, err)

	type seen struct {
		parent, state, followUp string
		err                     error
	}
	got := make(chan seen, 1)
	runCtx, stop := context.WithCancel(context.Background())
	w := client.NewWorker(c, client.WorkerConfig{Queues: []string{"traced.first"}, WorkerID: "tracer", FetchTimeout: time.Second},
		func(ctx context.Context, j *client.JobContext) (any, error) {
			p, s := client.TraceParentFrom(ctx)
			r, err := c.Enqueue(ctx, client.EnqueueRequest{Queue: "traced.next", Payload: j.ID})
			var id string
			if r != nil {
				id = r.JobID
			}
			select {
			case got <- seen{p, s, id, err}:
			default:
			}
			return nil, err
		})
	done := make(chan error, 1)
	go func() { done <- w.Run(runCtx) }()
	defer func() {
		stop()
		require.NoError(t, <-done)
	}()

	var s seen
	select {
	case s = <-got:
	case <-time.After(30 * time.Second):
		t.Fatal("the handler did not run")
	}
	require.NoError(t, s.err)
	require.Equal(t, parent, s.parent, "the handler's ctx carries its job's traceparent")
	require.Equal(t, "congo=t61", s.state)
	next, err := c.GetJob(ctx(t), s.followUp)
	require.NoError(t, err)
	require.Equal(t, traceID(parent), traceID(next.TraceParent), "the follow-up job continues the trace of %s", first.JobID)
	require.Equal(t, "congo=t61", next.TraceState)
}

// A trace context carried in ctx goes with every enqueue that names
// none, a single job's and a batch's; a request's own trace context
// wins.
func TestTraceContextFromContext(t *testing.T) {
	t.Parallel()
	c, _ := shared.tenant(t)
	const carried = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	const own = "00-11111111111111111111111111111111-2222222222222222-01"
	tctx := client.WithTraceParent(ctx(t), carried, "vendor=x")
	p, s := client.TraceParentFrom(tctx)
	require.Equal(t, carried, p)
	require.Equal(t, "vendor=x", s)

	traceOf := func(id string) (string, string) {
		t.Helper()
		d, err := c.GetJob(ctx(t), id)
		require.NoError(t, err)
		return d.TraceParent, d.TraceState
	}
	r, err := c.Enqueue(tctx, client.EnqueueRequest{Queue: "traced.ctx"})
	require.NoError(t, err)
	p, s = traceOf(r.JobID)
	require.Equal(t, carried, p)
	require.Equal(t, "vendor=x", s)

	r, err = c.Enqueue(tctx, client.EnqueueRequest{Queue: "traced.ctx", TraceParent: own})
	require.NoError(t, err)
	p, s = traceOf(r.JobID)
	require.Equal(t, own, p, "the request's own wins")
	require.Empty(t, s, "and the carried tracestate does not go with another trace")

	jobs := []client.EnqueueRequest{{Queue: "traced.ctx"}, {Queue: "traced.ctx", TraceParent: own}}
	b, err := c.EnqueueBatch(tctx, client.BatchRequest{Jobs: jobs})
	require.NoError(t, err)
	require.Len(t, b.JobIDs, 2)
	p, _ = traceOf(b.JobIDs[0])
	require.Equal(t, carried, p)
	p, _ = traceOf(b.JobIDs[1])
	require.Equal(t, own, p)
	require.Empty(t, jobs[0].TraceParent, "the caller's requests are left as they were")

	r, err = c.Enqueue(ctx(t), client.EnqueueRequest{Queue: "traced.ctx"})
	require.NoError(t, err)
	p, _ = traceOf(r.JobID)
	require.Empty(t, p, "a ctx without a trace context sends none")
	r, err = c.Enqueue(client.WithTraceParent(tctx, "", ""), client.EnqueueRequest{Queue: "traced.ctx"})
	require.NoError(t, err)
	p, _ = traceOf(r.JobID)
	require.Empty(t, p, "WithTraceParent with none takes the carried one away")
}

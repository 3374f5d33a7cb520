package main

import (
	"context"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/client"
	jobbiev1 "github.com/jobbie/jobbie/proto/gen/jobbie/v1"
	"github.com/jobbie/jobbie/wire"
)

// Trace contexts for the tests: two producers' and a stream's.
const (
	traceA = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	traceB = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	traceS = "00-11111111111111111111111111111111-2222222222222222-01"
)

// Against jobbie dev, a job enqueued by gRPC carries the trace context it
// was enqueued with, as over HTTP: Enqueue's fields, or else the call's
// traceparent and tracestate metadata (as the HTTP headers; the fields
// win), EnqueueBatch's per job; GetJob and the HTTP job detail show it.
// A bad one is InvalidArgument naming the field or metadata, and nothing
// is enqueued.
func TestGRPCEnqueueCarriesTraceContextAgainstDev(t *testing.T) {
	t.Parallel()
	d := startDevIn(t, t.TempDir(), "--grpc-addr", "127.0.0.1:0")
	require.NotEmpty(t, d.grpc, "dev printed no gRPC address")
	ctx := context.Background()
	key := readKey(t, filepath.Join(d.dir, "owner.key"))
	api := client.New(d.gateway, key)
	owner := dial(h2c(t), d.grpc, key, connect.WithGRPC())

	enqueue := func(req *jobbiev1.EnqueueRequest, parent, state string) (string, error) {
		r := connect.NewRequest(req)
		if parent != "" {
			r.Header().Set("traceparent", parent)
		}
		if state != "" {
			r.Header().Set("tracestate", state)
		}
		res, err := owner.jobs.Enqueue(ctx, r)
		if err != nil {
			return "", err
		}
		return res.Msg.GetJobId(), nil
	}
	// hasTrace checks GetJob and the HTTP job detail of job id say it
	// carries parent and state.
	hasTrace := func(id, parent, state string) {
		t.Helper()
		got, err := owner.jobs.GetJob(ctx, connect.NewRequest(&jobbiev1.GetJobRequest{Id: id}))
		require.NoError(t, err)
		require.Equal(t, parent, got.Msg.GetJob().GetTraceparent(), "GetJob's traceparent")
		require.Equal(t, state, got.Msg.GetJob().GetTracestate(), "GetJob's tracestate")
		detail, err := api.GetJob(ctx, id)
		require.NoError(t, err)
		require.Equal(t, parent, detail.TraceParent, "the HTTP detail's traceparent")
		require.Equal(t, state, detail.TraceState, "the HTTP detail's tracestate")
	}

	// The fields.
	id, err := enqueue(&jobbiev1.EnqueueRequest{Queue: "traced.grpc", Traceparent: traceA, Tracestate: "vendor=a"}, "", "")
	require.NoError(t, err)
	hasTrace(id, traceA, "vendor=a")
	// The metadata, for a job that names none; a job's own wins, whole.
	id, err = enqueue(&jobbiev1.EnqueueRequest{Queue: "traced.grpc"}, traceB, "vendor=b")
	require.NoError(t, err)
	hasTrace(id, traceB, "vendor=b")
	id, err = enqueue(&jobbiev1.EnqueueRequest{Queue: "traced.grpc", Traceparent: traceA}, traceB, "vendor=b")
	require.NoError(t, err)
	hasTrace(id, traceA, "")

	// A batch: each job's own, else the metadata.
	breq := connect.NewRequest(&jobbiev1.EnqueueBatchRequest{Jobs: []*jobbiev1.EnqueueRequest{
		{Queue: "traced.grpc", Traceparent: traceA, Tracestate: "vendor=a"}, {Queue: "traced.grpc"}}})
	breq.Header().Set("traceparent", traceB)
	batch, err := owner.jobs.EnqueueBatch(ctx, breq)
	require.NoError(t, err)
	require.Len(t, batch.Msg.GetJobIds(), 2)
	hasTrace(batch.Msg.GetJobIds()[0], traceA, "vendor=a")
	hasTrace(batch.Msg.GetJobIds()[1], traceB, "")

	// Bad input names its field, and enqueues nothing.
	for _, c := range []struct {
		name, field   string
		req           *jobbiev1.EnqueueRequest
		parent, state string
	}{
		{"a bad traceparent", "traceparent", &jobbiev1.EnqueueRequest{Queue: "traced.bad", Traceparent: "00-nothex-01"}, "", ""},
		{"an upper-case traceparent", "traceparent", &jobbiev1.EnqueueRequest{Queue: "traced.bad", Traceparent: strings.ToUpper(traceA)}, "", ""},
		{"a tracestate alone", "tracestate", &jobbiev1.EnqueueRequest{Queue: "traced.bad", Tracestate: "vendor=a"}, "", ""},
		{"a bad tracestate", "tracestate", &jobbiev1.EnqueueRequest{Queue: "traced.bad", Traceparent: traceA, Tracestate: "Vendor"}, "", ""},
		{"a bad step's", "chain.steps[1].traceparent", &jobbiev1.EnqueueRequest{Queue: "traced.bad", Chain: &jobbiev1.ChainSpec{
			Steps: []*jobbiev1.StepSpec{{}, {Queue: "traced.bad", Traceparent: "00-0-0-01"}}}}, "", ""},
		{"bad metadata", "traceparent", &jobbiev1.EnqueueRequest{Queue: "traced.bad"}, "01-" + traceA[3:], ""},
		{"bad metadata beside a good field", "traceparent", &jobbiev1.EnqueueRequest{Queue: "traced.bad", Traceparent: traceA}, "garbage", ""},
	} {
		_, err := enqueue(c.req, c.parent, c.state)
		ce := requireCode(t, err, connect.CodeInvalidArgument)
		require.Equal(t, c.field, badField(t, ce), "%s: %v", c.name, err)
		require.Contains(t, ce.Message(), c.field, c.name)
	}
	_, err = owner.jobs.EnqueueBatch(ctx, connect.NewRequest(&jobbiev1.EnqueueBatchRequest{Jobs: []*jobbiev1.EnqueueRequest{
		{Queue: "traced.bad", Traceparent: traceA}, {Queue: "traced.bad", Traceparent: "bad"}}}))
	require.Equal(t, "jobs[1].traceparent", badField(t, requireCode(t, err, connect.CodeInvalidArgument)))
	_, err = owner.jobs.EnqueueBatch(ctx, connect.NewRequest(&jobbiev1.EnqueueBatchRequest{Jobs: []*jobbiev1.EnqueueRequest{{Queue: "traced.bad"}},
		Batch: &jobbiev1.BatchSpec{CallbackQueue: "traced.bad", Traceparent: traceA, Tracestate: "a=1,a=2"}}))
	require.Equal(t, "batch.tracestate", badField(t, requireCode(t, err, connect.CodeInvalidArgument)))
	page, err := api.Search(ctx, client.SearchRequest{SearchFilter: client.SearchFilter{Queue: "traced.bad"}})
	require.NoError(t, err)
	require.Empty(t, page.Jobs, "a refused enqueue enqueued nothing")
}

// Against jobbie dev, what a worker enqueues over the stream carries the
// trace context it names: an ack's follow-ups and an enqueues frame's
// job, shown by GetJob and the HTTP job detail. The stream's own
// traceparent metadata is given to none of them (it is the stream's, not
// the jobs'). A bad one is refused naming its field: an enqueue's result
// bad_request, an ack's follow-ups not enqueued (the ack completed).
func TestWorkerStreamEnqueuesCarryTraceContextAgainstDev(t *testing.T) {
	t.Parallel()
	d := startDevIn(t, t.TempDir(), "--grpc-addr", "127.0.0.1:0")
	require.NotEmpty(t, d.grpc, "dev printed no gRPC address")
	ctx := context.Background()
	key := readKey(t, filepath.Join(d.dir, "owner.key"))
	api := client.New(d.gateway, key)
	hc := h2c(t)
	owner := dial(hc, d.grpc, key, connect.WithGRPC())
	for range 2 {
		_, err := api.Enqueue(ctx, client.EnqueueRequest{Queue: "traced.parent", Payload: 1})
		require.NoError(t, err)
	}

	md := http.Header{}
	md.Set("Authorization", "Bearer "+key)
	md.Set("traceparent", traceS)
	s := openStreamWith(t, hc, d.grpc, md, &jobbiev1.WorkRequest{
		Hello: &jobbiev1.Hello{WorkerId: "w-traced", Queues: []string{"traced.parent"}}, Credit: &jobbiev1.Credit{N: 2}})
	leased := s.waitJobs(t, 2)
	s.send(t, &jobbiev1.WorkRequest{
		Acks: []*jobbiev1.Ack{
			{CorrelationId: 1, JobId: leased[0].GetJobId(), LeaseToken: leased[0].GetLeaseToken(), Enqueue: []*jobbiev1.EnqueueRequest{
				{Queue: "traced.child", Traceparent: traceA, Tracestate: "vendor=a"}, {Queue: "traced.child"}}},
			{CorrelationId: 2, JobId: leased[1].GetJobId(), LeaseToken: leased[1].GetLeaseToken(), Enqueue: []*jobbiev1.EnqueueRequest{
				{Queue: "traced.refused"}, {Queue: "traced.refused", Traceparent: "00-bad"}}}},
		Enqueues: []*jobbiev1.Enqueue{
			{CorrelationId: 3, Job: &jobbiev1.EnqueueRequest{Queue: "traced.child", Traceparent: traceB}},
			{CorrelationId: 4, Job: &jobbiev1.EnqueueRequest{Queue: "traced.child"}},
			{CorrelationId: 5, Job: &jobbiev1.EnqueueRequest{Queue: "traced.refused", Tracestate: "vendor=x"}}},
	})
	res := s.waitResults(t, 1, 2, 3, 4, 5)

	hasTrace := func(id, parent, state string) {
		t.Helper()
		got, err := owner.jobs.GetJob(ctx, connect.NewRequest(&jobbiev1.GetJobRequest{Id: id}))
		require.NoError(t, err)
		require.Equal(t, parent, got.Msg.GetJob().GetTraceparent(), "GetJob's traceparent")
		require.Equal(t, state, got.Msg.GetJob().GetTracestate(), "GetJob's tracestate")
		detail, err := api.GetJob(ctx, id)
		require.NoError(t, err)
		require.Equal(t, parent, detail.TraceParent, "the HTTP detail's traceparent")
		require.Equal(t, state, detail.TraceState, "the HTTP detail's tracestate")
	}
	ack := res[1]
	require.Equal(t, wire.StateCompleted, ack.GetStatus())
	require.Empty(t, ack.GetErrorCode(), ack.GetErrorMessage())
	require.Len(t, ack.GetEnqueued(), 2)
	hasTrace(ack.GetEnqueued()[0].GetJobId(), traceA, "vendor=a")
	hasTrace(ack.GetEnqueued()[1].GetJobId(), "", "")
	require.Len(t, res[3].GetEnqueued(), 1, "%v", res[3])
	hasTrace(res[3].GetEnqueued()[0].GetJobId(), traceB, "")
	require.Len(t, res[4].GetEnqueued(), 1, "%v", res[4])
	hasTrace(res[4].GetEnqueued()[0].GetJobId(), "", "")

	bad := res[2]
	require.Equal(t, wire.StateCompleted, bad.GetStatus(), "the ack completed")
	require.Equal(t, string(wire.CodeBadRequest), bad.GetErrorCode())
	require.Contains(t, bad.GetErrorMessage(), "jobs[1].traceparent")
	require.Empty(t, bad.GetEnqueued())
	require.Equal(t, string(wire.CodeBadRequest), res[5].GetErrorCode())
	require.Contains(t, res[5].GetErrorMessage(), "tracestate")
	page, err := api.Search(ctx, client.SearchRequest{SearchFilter: client.SearchFilter{Queue: "traced.refused"}})
	require.NoError(t, err)
	require.Empty(t, page.Jobs, "a refused enqueue enqueued nothing")
}

// Against jobbie dev, the Go SDK's JobDetail says which version of its
// queue's payload schema a job's payload was checked against, as the
// HTTP job detail does (GetJob and Search); 0 for a job of a queue
// without a schema.
func TestJobDetailSchemaVersionAgainstDev(t *testing.T) {
	t.Parallel()
	d := startDevIn(t, t.TempDir())
	ctx := context.Background()
	api := client.New(d.gateway, readKey(t, filepath.Join(d.dir, "owner.key")))
	schema := func(s string) {
		t.Helper()
		_, err := api.PutQueue(ctx, "typed", client.QueueSpec{Schema: []byte(s)})
		require.NoError(t, err)
	}
	schema(`{"type":"object"}`)
	v1, err := api.Enqueue(ctx, client.EnqueueRequest{Queue: "typed", Payload: map[string]any{"n": 1}})
	require.NoError(t, err)
	schema(`{"type":"object","required":["n"]}`)
	v2, err := api.Enqueue(ctx, client.EnqueueRequest{Queue: "typed", Payload: map[string]any{"n": 2}})
	require.NoError(t, err)
	bare, err := api.Enqueue(ctx, client.EnqueueRequest{Queue: "untyped", Payload: 3})
	require.NoError(t, err)

	for id, want := range map[string]int64{v1.JobID: 1, v2.JobID: 2, bare.JobID: 0} {
		j, err := api.GetJob(ctx, id)
		require.NoError(t, err)
		require.Equal(t, want, j.SchemaVersion, "job %s", id)
	}
	page, err := api.Search(ctx, client.SearchRequest{SearchFilter: client.SearchFilter{Queue: "typed"}})
	require.NoError(t, err)
	got := map[string]int64{}
	for _, j := range page.Jobs {
		got[j.ID] = j.SchemaVersion
	}
	require.Equal(t, map[string]int64{v1.JobID: 1, v2.JobID: 2}, got)
}

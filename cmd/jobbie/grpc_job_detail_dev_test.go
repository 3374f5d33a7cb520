package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/jobbie/jobbie/client"
	jobbiev1 "github.com/jobbie/jobbie/proto/gen/jobbie/v1"
	"github.com/jobbie/jobbie/wire"
)

// Against jobbie dev, the gRPC Job says what the HTTP job detail says of
// a job enqueued with a trace context to a queue with a payload schema
// and worked over the worker stream with usage on a heartbeat and on the
// ack: GetJob's Job carries its traceparent, tracestate, schema_version
// and summed usage (the cost exact), Search's all but the usage (as the
// HTTP search), the stream's job frame its trace context; a job with
// none of them carries none.
func TestGRPCGetJobCarriesTraceSchemaAndUsageAgainstDev(t *testing.T) {
	t.Parallel()
	d := startDevIn(t, t.TempDir(), "--grpc-addr", "127.0.0.1:0")
	require.NotEmpty(t, d.grpc, "dev printed no gRPC address")
	ctx := context.Background()
	key := readKey(t, filepath.Join(d.dir, "owner.key"))
	api := client.New(d.gateway, key)
	hc := h2c(t)
	owner := dial(hc, d.grpc, key, connect.WithGRPC())

	const parent, state = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "vendor=v1"
	q, err := api.PutQueue(ctx, "typed", client.QueueSpec{Schema: json.RawMessage(`{"type":"object","required":["n"]}`)})
	require.NoError(t, err)
	require.EqualValues(t, 1, q.SchemaVersion)
	traced, err := api.Enqueue(ctx, client.EnqueueRequest{Queue: "typed", Payload: map[string]any{"n": 1},
		TraceParent: parent, TraceState: state})
	require.NoError(t, err)
	bare, err := api.Enqueue(ctx, client.EnqueueRequest{Queue: "bare", Payload: 1})
	require.NoError(t, err)

	// Worked over the stream: its job frame carries the trace context;
	// a heartbeat and the ack report usage.
	s := openStream(t, hc, d.grpc, key, &jobbiev1.WorkRequest{Hello: &jobbiev1.Hello{WorkerId: "w-fields", Queues: []string{"typed"}},
		Credit: &jobbiev1.Credit{N: 1}})
	leased := s.waitJobs(t, 1)[0]
	require.Equal(t, traced.JobID, leased.GetJobId())
	require.Equal(t, parent, leased.GetTraceparent())
	require.Equal(t, state, leased.GetTracestate())
	usage := func(u map[string]any) *structpb.Value {
		v, err := structpb.NewValue(u)
		require.NoError(t, err)
		return v
	}
	s.send(t, &jobbiev1.WorkRequest{Heartbeats: []*jobbiev1.Heartbeat{{CorrelationId: 1, JobId: leased.GetJobId(),
		LeaseToken: leased.GetLeaseToken(), Usage: usage(map[string]any{"input_tokens": 1200, "cost_usd": "0.1", "model": "haiku"})}}})
	require.Equal(t, wire.HeartbeatOK, s.waitResults(t, 1)[1].GetStatus())
	s.send(t, &jobbiev1.WorkRequest{Acks: []*jobbiev1.Ack{{CorrelationId: 2, JobId: leased.GetJobId(), LeaseToken: leased.GetLeaseToken(),
		Usage: usage(map[string]any{"output_tokens": 34, "cache_read_tokens": 7, "cost_usd": "0.000000001", "provider": "anthropic"})}}})
	require.Equal(t, wire.StateCompleted, s.waitResults(t, 2)[2].GetStatus())

	wantUsage := &jobbiev1.AIUsage{InputTokens: 1200, OutputTokens: 34, CacheReadTokens: 7, CostUsd: "0.100000001",
		Model: "haiku", Provider: "anthropic"}
	got, err := owner.jobs.GetJob(ctx, connect.NewRequest(&jobbiev1.GetJobRequest{Id: traced.JobID}))
	require.NoError(t, err)
	job := got.Msg.GetJob()
	require.Equal(t, parent, job.GetTraceparent())
	require.Equal(t, state, job.GetTracestate())
	require.EqualValues(t, 1, job.GetSchemaVersion())
	require.True(t, proto.Equal(wantUsage, job.GetUsage()), "usage %v, want %v", job.GetUsage(), wantUsage)

	// The HTTP job detail says the same.
	detail, err := api.GetJob(ctx, traced.JobID)
	require.NoError(t, err)
	require.Equal(t, &client.AIUsage{InputTokens: 1200, OutputTokens: 34, CacheReadTokens: 7, CostUSD: "0.100000001",
		Model: "haiku", Provider: "anthropic"}, detail.Usage)
	require.Equal(t, parent, detail.TraceParent)

	// Search's Job carries the same, but usage: the HTTP search reads no
	// job's usage record, and says none.
	found, err := owner.jobs.Search(ctx, connect.NewRequest(&jobbiev1.SearchRequest{Queue: "typed"}))
	require.NoError(t, err)
	require.Len(t, found.Msg.GetJobs(), 1)
	sj := found.Msg.GetJobs()[0]
	require.Equal(t, parent, sj.GetTraceparent())
	require.Equal(t, state, sj.GetTracestate())
	require.EqualValues(t, 1, sj.GetSchemaVersion())
	page, err := api.Search(ctx, client.SearchRequest{SearchFilter: client.SearchFilter{Queue: "typed"}})
	require.NoError(t, err)
	require.Len(t, page.Jobs, 1)
	require.Nil(t, page.Jobs[0].Usage)
	require.Nil(t, sj.GetUsage())

	// A job with none of them carries none.
	got, err = owner.jobs.GetJob(ctx, connect.NewRequest(&jobbiev1.GetJobRequest{Id: bare.JobID}))
	require.NoError(t, err)
	job = got.Msg.GetJob()
	require.Equal(t, bare.JobID, job.GetId())
	require.Empty(t, job.GetTraceparent())
	require.Empty(t, job.GetTracestate())
	require.Zero(t, job.GetSchemaVersion())
	require.Nil(t, job.GetUsage())
}

// The Go SDK's worker over the stream hands its handler the job's trace
// context, as over HTTP: the JobContext's, and what the handler enqueues
// continues it.
func TestStreamWorkerHandlerHasTheJobsTraceAgainstDev(t *testing.T) {
	t.Parallel()
	d := startDevIn(t, t.TempDir(), "--grpc-addr", "127.0.0.1:0")
	ctx := context.Background()
	api := client.New(d.gateway, readKey(t, filepath.Join(d.dir, "owner.key")))
	const parent, state = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", "vendor=v2"
	traced, err := api.Enqueue(ctx, client.EnqueueRequest{Queue: "traced.stream", Payload: 1, TraceParent: parent, TraceState: state})
	require.NoError(t, err)

	type seen struct{ parent, state, followUp string }
	got := make(chan seen, 1)
	w := client.NewWorker(api, client.WorkerConfig{Queues: []string{"traced.stream"}, WorkerID: "traced-stream",
		Transport: client.TransportStream},
		func(hctx context.Context, j *client.JobContext) (any, error) {
			r, err := api.Enqueue(hctx, client.EnqueueRequest{Queue: "traced.next", Payload: 2})
			if err != nil {
				return nil, err
			}
			got <- seen{j.TraceParent, j.TraceState, r.JobID}
			return nil, nil
		})
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- w.Run(runCtx) }()
	var s seen
	select {
	case s = <-got:
	case <-time.After(time.Minute):
		t.Fatal("the handler did not run within a minute")
	}
	eventually(t, "the job completed", func() bool {
		dj, err := api.GetJob(ctx, traced.JobID)
		return err == nil && dj.State == wire.StateCompleted
	})
	stop()
	require.NoError(t, <-done)
	require.Equal(t, client.TransportStream, w.Transport())
	require.Equal(t, parent, s.parent)
	require.Equal(t, state, s.state)
	next, err := api.GetJob(ctx, s.followUp)
	require.NoError(t, err)
	require.Equal(t, parent, next.TraceParent, "the follow-up continues the job's trace")
	require.Equal(t, state, next.TraceState)
}

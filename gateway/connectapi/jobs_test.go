package connectapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/timestamppb"

	jobbiev1 "github.com/jobbie/jobbie/proto/gen/jobbie/v1"
	"github.com/jobbie/jobbie/wire"
)

// jsonNames are the JSON names of t's fields, those of embedded structs
// inline, as encoding/json reads them.
func jsonNames(t reflect.Type) []string {
	var names []string
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous {
			names = append(names, jsonNames(f.Type)...)
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		names = append(names, name)
	}
	return names
}

// Search's request carries every filter and page field of POST
// /api/v1/jobs/search, by the HTTP API's names: a field the HTTP search
// gains and SearchRequest lacks fails here.
func TestSearchRequestHasEveryHTTPField(t *testing.T) {
	t.Parallel()
	fields := (&jobbiev1.SearchRequest{}).ProtoReflect().Descriptor().Fields()
	for _, name := range jsonNames(reflect.TypeFor[wire.SearchRequest]()) {
		require.NotNil(t, fields.ByName(protoreflect.Name(name)), "the HTTP search's %q has no SearchRequest field", name)
	}
}

// A Search with filters set reaches the route as the JSON the route
// reads, field for field, and the held jobs it finds say which budget
// holds them. The real route is tested against jobbie dev
// (cmd/jobbie/grpc_dev_test.go).
func TestSearchSendsItsFilters(t *testing.T) {
	t.Parallel()
	var got *Request
	page, _ := json.Marshal(wire.SearchPage{Jobs: []wire.SearchJob{{JobDetail: wire.JobDetail{ID: "j1", Queue: "llm",
		State: wire.StateHeld, HeldReason: wire.HeldReasonBudget, HeldBudget: "daily"}}}})
	s := New(func(r *Request) Answer {
		got = r
		return Answer{Status: http.StatusOK, Body: page}
	}, WorkConfig{}, ScalerConfig{})
	since := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	attempts := int32(2)
	res, err := s.Search(context.Background(), connect.NewRequest(&jobbiev1.SearchRequest{
		Queue: "llm", State: []string{wire.StateHeld}, HeldReason: wire.HeldReasonBudget, HeldBudget: "daily",
		CreatedAfter: timestamppb.New(since), AttemptMin: &attempts, Tags: map[string]string{"team": "a"}, Limit: 10}))
	require.NoError(t, err)

	require.Equal(t, http.MethodPost, got.Method)
	require.Equal(t, "/api/v1/jobs/search", got.Path)
	var sent wire.SearchRequest
	dec := json.NewDecoder(bytes.NewReader(got.Body))
	dec.DisallowUnknownFields() // as the route reads it: an unknown field is its 400
	require.NoError(t, dec.Decode(&sent), "%s", got.Body)
	two := 2
	require.Equal(t, wire.SearchRequest{SearchFilter: wire.SearchFilter{Queue: "llm", State: []string{wire.StateHeld},
		HeldReason: wire.HeldReasonBudget, HeldBudget: "daily", CreatedAfter: &since, AttemptMin: &two,
		Tags: map[string]string{"team": "a"}}, Limit: 10}, sent)

	require.Len(t, res.Msg.GetJobs(), 1)
	require.Equal(t, wire.HeldReasonBudget, res.Msg.GetJobs()[0].GetHeldReason())
	require.Equal(t, "daily", res.Msg.GetJobs()[0].GetHeldBudget())
}

// Job carries every field of the HTTP job detail by the HTTP API's
// names (and AIUsage every field of its usage), so GetJob and Search,
// which read the route's JSON with protojson, drop none of them: a field
// the job detail gains and Job lacks fails here.
func TestJobHasEveryJobDetailField(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		of     reflect.Type
		fields protoreflect.FieldDescriptors
	}{
		{reflect.TypeFor[wire.JobDetail](), (&jobbiev1.Job{}).ProtoReflect().Descriptor().Fields()},
		{reflect.TypeFor[wire.AIUsage](), (&jobbiev1.AIUsage{}).ProtoReflect().Descriptor().Fields()},
	} {
		for _, name := range jsonNames(c.of) {
			require.NotNil(t, c.fields.ByName(protoreflect.Name(name)), "%s's %q has no field in the message", c.of, name)
		}
	}
}

// GetJob's answer holds the job detail's trace context, schema version
// and usage (the cost as the exact decimal string the route wrote); a job
// without them answers none. The real route is tested against jobbie dev
// (TestGRPCGetJobCarriesTraceSchemaAndUsageAgainstDev).
func TestGetJobCarriesTraceSchemaAndUsage(t *testing.T) {
	t.Parallel()
	full, _ := json.Marshal(wire.JobDetail{ID: "j1", Queue: "llm", State: wire.StateCompleted,
		TraceParent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", TraceState: "v=1", SchemaVersion: 3,
		Usage: &wire.AIUsage{InputTokens: 1200, OutputTokens: 340, CacheReadTokens: 5, CacheWriteTokens: 7,
			CostUSD: "0.000000001", Model: "claude-x", Provider: "anthropic"}})
	bare, _ := json.Marshal(wire.JobDetail{ID: "j2", Queue: "llm", State: wire.StatePending})
	s := New(func(r *Request) Answer {
		if strings.HasSuffix(r.Path, "/j1") {
			return Answer{Status: http.StatusOK, Body: full}
		}
		return Answer{Status: http.StatusOK, Body: bare}
	}, WorkConfig{}, ScalerConfig{})

	res, err := s.GetJob(context.Background(), connect.NewRequest(&jobbiev1.GetJobRequest{Id: "j1"}))
	require.NoError(t, err)
	job := res.Msg.GetJob()
	require.Equal(t, "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", job.GetTraceparent())
	require.Equal(t, "v=1", job.GetTracestate())
	require.Equal(t, int64(3), job.GetSchemaVersion())
	want := &jobbiev1.AIUsage{InputTokens: 1200, OutputTokens: 340, CacheReadTokens: 5, CacheWriteTokens: 7,
		CostUsd: "0.000000001", Model: "claude-x", Provider: "anthropic"}
	require.True(t, proto.Equal(want, job.GetUsage()), "usage %v, want %v", job.GetUsage(), want)

	res, err = s.GetJob(context.Background(), connect.NewRequest(&jobbiev1.GetJobRequest{Id: "j2"}))
	require.NoError(t, err)
	job = res.Msg.GetJob()
	require.Empty(t, job.GetTraceparent())
	require.Zero(t, job.GetSchemaVersion())
	require.Nil(t, job.GetUsage())
}

// The enqueue messages carry every field of the HTTP enqueue's JSON by
// its names (a job, a chain and its steps, a batch and its callback),
// the trace context among them: a field the HTTP enqueue gains and the
// message lacks fails here.
func TestEnqueueMessagesHaveEveryHTTPField(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		of  reflect.Type
		msg proto.Message
	}{
		{reflect.TypeFor[wire.EnqueueRequest](), &jobbiev1.EnqueueRequest{}},
		{reflect.TypeFor[wire.ChainSpec](), &jobbiev1.ChainSpec{}},
		{reflect.TypeFor[wire.StepSpec](), &jobbiev1.StepSpec{}},
		{reflect.TypeFor[wire.BatchRequest](), &jobbiev1.EnqueueBatchRequest{}},
		{reflect.TypeFor[wire.BatchSpec](), &jobbiev1.BatchSpec{}},
	} {
		fields := c.msg.ProtoReflect().Descriptor().Fields()
		for _, name := range jsonNames(c.of) {
			require.NotNil(t, fields.ByName(protoreflect.Name(name)), "%s's %q has no field in %T", c.of, name, c.msg)
		}
	}
}

// An enqueue's trace context reaches the route as the HTTP enqueue's:
// the job's, a step's and a callback's fields in the body, and the
// call's traceparent and tracestate metadata as the headers. The route
// checks them; against jobbie dev: TestGRPCEnqueueCarriesTraceContextAgainstDev.
func TestEnqueueSendsItsTraceContext(t *testing.T) {
	t.Parallel()
	const tp, tp2 = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	var got *Request
	s := New(func(r *Request) Answer {
		got = r
		return Answer{Status: http.StatusCreated, Body: []byte(`{"job_id":"j1","status":"pending","job_ids":["j1"],"jobs":[]}`)}
	}, WorkConfig{}, ScalerConfig{})

	req := connect.NewRequest(&jobbiev1.EnqueueRequest{Queue: "q", Traceparent: tp, Tracestate: "a=1",
		Chain: &jobbiev1.ChainSpec{Steps: []*jobbiev1.StepSpec{{}, {Queue: "next", Traceparent: tp2, Tracestate: "b=2"}}}})
	req.Header().Set("Authorization", "Bearer k")
	req.Header().Set("traceparent", tp2)
	req.Header().Set("tracestate", "m=1")
	_, err := s.Enqueue(context.Background(), req)
	require.NoError(t, err)
	var one wire.EnqueueRequest
	require.NoError(t, json.Unmarshal(got.Body, &one), "%s", got.Body)
	require.Equal(t, tp, one.TraceParent)
	require.Equal(t, "a=1", one.TraceState)
	require.Equal(t, tp2, one.Chain.Steps[1].TraceParent)
	require.Equal(t, "b=2", one.Chain.Steps[1].TraceState)
	require.Equal(t, tp2, got.Header.Get(wire.TraceParentHeader), "the metadata is the HTTP enqueue's headers")
	require.Equal(t, "m=1", got.Header.Get(wire.TraceStateHeader))

	_, err = s.EnqueueBatch(context.Background(), connect.NewRequest(&jobbiev1.EnqueueBatchRequest{
		Jobs:  []*jobbiev1.EnqueueRequest{{Queue: "q", Traceparent: tp}, {Queue: "q"}},
		Batch: &jobbiev1.BatchSpec{CallbackQueue: "done", Traceparent: tp2, Tracestate: "c=3"}}))
	require.NoError(t, err)
	var batch wire.BatchRequest
	require.NoError(t, json.Unmarshal(got.Body, &batch), "%s", got.Body)
	require.Equal(t, tp, batch.Jobs[0].TraceParent)
	require.Empty(t, batch.Jobs[1].TraceParent)
	require.Equal(t, tp2, batch.Batch.TraceParent)
	require.Equal(t, "c=3", batch.Batch.TraceState)
	require.Empty(t, got.Header.Values(wire.TraceParentHeader), "no metadata, no header")
}

// A worker stream's traceparent metadata is the stream's, not each
// request's: none of its calls carries it, so a job enqueued on it has
// only the trace context it names.
func TestWorkStreamPassesNoTraceMetadata(t *testing.T) {
	t.Parallel()
	f := newWorkerRoute(1)
	bidi := serveWork(t, f, WorkConfig{}).Work(context.Background())
	bidi.RequestHeader().Set("Authorization", "Bearer k")
	bidi.RequestHeader().Set("traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	require.NoError(t, bidi.Send(&jobbiev1.WorkRequest{Hello: &jobbiev1.Hello{WorkerId: "w1", Queues: []string{"q"}},
		Credit: &jobbiev1.Credit{N: 1}}))
	jobs := recv(t, bidi, func(r *jobbiev1.WorkResponse) bool { return len(r.GetJobs()) > 0 }).GetJobs()
	require.NoError(t, bidi.Send(&jobbiev1.WorkRequest{Acks: []*jobbiev1.Ack{{CorrelationId: 1, JobId: jobs[0].GetJobId(),
		LeaseToken: jobs[0].GetLeaseToken()}}}))
	recv(t, bidi, func(r *jobbiev1.WorkResponse) bool { return len(r.GetResults()) > 0 })
	require.NoError(t, bidi.CloseRequest())
	_, err := bidi.Receive()
	require.True(t, errors.Is(err, io.EOF), "%v", err)
	f.mu.Lock()
	defer f.mu.Unlock()
	require.NotEmpty(t, f.calls)
	for _, c := range f.calls {
		require.Equal(t, "Bearer k", c.Header.Get("Authorization"))
		require.Empty(t, c.Header.Values(wire.TraceParentHeader), "%s %s", c.Method, c.Path)
	}
}

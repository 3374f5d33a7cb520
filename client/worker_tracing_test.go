package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/jobbie/jobbie/client"
)

const (
	producerTrace = "0af7651916cd43dd8448eb211c80319c"
	producerSpan  = "b7ad6b7169203331"
	producerCtx   = "00-" + producerTrace + "-" + producerSpan + "-01"
)

// tracedWorker runs a worker whose TracerProvider records into the
// returned recorder.
func tracedWorker(t *testing.T, h client.Handler) (*workerBundle, *tracetest.SpanRecorder) {
	t.Helper()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	return startWorker(t, client.WorkerConfig{Concurrency: 1, TracerProvider: tp}, h), rec
}

// The handler of a job enqueued in a trace runs in a `process <queue>`
// consumer span, a child of the producer's span and linked to it, with
// the messaging attributes; a span the handler starts is its child, and
// a job the handler enqueues carries the process span's context.
func TestWorkerProcessSpanContinuesTheJobsTrace(t *testing.T) {
	t.Parallel()
	enq := newRecorder(t, http.StatusCreated, `{"job_id":"child"}`)
	producer := enq.client(t)
	childSpan := make(chan trace.SpanContext, 1)
	b, rec := tracedWorker(t, func(ctx context.Context, job *client.JobContext) (any, error) {
		_, span := trace.SpanFromContext(ctx).TracerProvider().Tracer("handler").Start(ctx, "work")
		childSpan <- span.SpanContext()
		span.End()
		_, err := producer.Enqueue(ctx, client.EnqueueRequest{Queue: "next"})
		return nil, err
	})
	b.fake.pending <- fakeJob{ID: "j1", TraceParent: producerCtx, TraceState: "v=1"}
	recv(t, b.fake.acks)
	require.NoError(t, b.stop(t))

	spans := rec.Ended()
	process := spanNamed(t, spans, "process q")
	sc := process.SpanContext()
	require.Equal(t, trace.SpanKindConsumer, process.SpanKind())
	require.Equal(t, producerTrace, sc.TraceID().String(), "the job's trace goes on")
	require.Equal(t, producerSpan, process.Parent().SpanID().String(), "a child of the producer's span")
	require.True(t, process.Parent().IsRemote())
	require.Len(t, process.Links(), 1)
	require.Equal(t, producerSpan, process.Links()[0].SpanContext.SpanID().String(), "linked to the creation context")
	require.Equal(t, "v=1", process.Parent().TraceState().String())
	require.Subset(t, process.Attributes(), []attribute.KeyValue{
		attribute.String("messaging.system", "jobbie"),
		attribute.String("messaging.operation.type", "process"),
		attribute.String("messaging.destination.name", "q"),
		attribute.String("messaging.message.id", "j1"),
		attribute.Int("jobbie.job.attempt", 1),
	})
	require.Equal(t, codes.Unset, process.Status().Code)

	work := spanNamed(t, spans, "work")
	require.Equal(t, sc.SpanID(), work.Parent().SpanID(), "the handler's span is the process span's child")
	require.Equal(t, sc.TraceID(), recv(t, childSpan).TraceID())

	want := "00-" + producerTrace + "-" + sc.SpanID().String() + "-01"
	require.Equal(t, want, enqueuedTraceParent(t, enq), "the enqueue continues the process span")
}

// A failing handler's span has error status and an error.type; a panic's
// is "panic". A job without a trace context starts a trace of its own.
func TestWorkerProcessSpanRecordsFailures(t *testing.T) {
	t.Parallel()
	b, rec := tracedWorker(t, func(_ context.Context, job *client.JobContext) (any, error) {
		if job.ID == "boom" {
			panic("boom")
		}
		return nil, errors.New("no luck")
	})
	b.fake.add("plain", `{}`)
	recv(t, b.fake.fails)
	b.fake.pending <- fakeJob{ID: "boom", TraceParent: producerCtx}
	recv(t, b.fake.fails)
	require.NoError(t, b.stop(t))

	spans := rec.Ended()
	require.Len(t, spans, 2)
	plain, boom := spans[0], spans[1]
	require.Equal(t, codes.Error, plain.Status().Code)
	require.Equal(t, "no luck", plain.Status().Description)
	require.Contains(t, plain.Attributes(), attribute.String("error.type", "*errors.errorString"))
	require.False(t, plain.Parent().IsValid(), "no trace context: a root span")
	require.Empty(t, plain.Links())

	require.Equal(t, codes.Error, boom.Status().Code)
	require.Contains(t, boom.Attributes(), attribute.String("error.type", "panic"))
	require.Equal(t, producerTrace, boom.SpanContext().TraceID().String())
}

// Without a TracerProvider and with no SDK installed the worker records
// nothing, and a handler's enqueues carry the job's trace context as it
// came.
func TestWorkerWithoutTracerProviderPassesTheJobsContextOn(t *testing.T) {
	t.Parallel()
	enq := newRecorder(t, http.StatusCreated, `{"job_id":"child"}`)
	producer := enq.client(t)
	b := startWorker(t, client.WorkerConfig{Concurrency: 1}, func(ctx context.Context, _ *client.JobContext) (any, error) {
		if trace.SpanFromContext(ctx).IsRecording() {
			return nil, errors.New("a span records with no SDK installed")
		}
		_, err := producer.Enqueue(ctx, client.EnqueueRequest{Queue: "next"})
		return nil, err
	})
	b.fake.pending <- fakeJob{ID: "j1", TraceParent: producerCtx, TraceState: "v=1"}
	recv(t, b.fake.acks)
	require.NoError(t, b.stop(t))
	require.Equal(t, producerCtx, enqueuedTraceParent(t, enq))
}

// enqueuedTraceParent is the traceparent of the last enqueue rec saw.
func enqueuedTraceParent(t *testing.T, rec *recorder) string {
	t.Helper()
	rec.mu.Lock()
	defer rec.mu.Unlock()
	var body struct {
		TraceParent string `json:"traceparent"`
	}
	require.NoError(t, json.Unmarshal([]byte(rec.body), &body), "%s", rec.body)
	return body.TraceParent
}

func spanNamed(t *testing.T, spans []sdktrace.ReadOnlySpan, name string) sdktrace.ReadOnlySpan {
	t.Helper()
	var names []string
	for _, s := range spans {
		if s.Name() == name {
			return s
		}
		names = append(names, s.Name())
	}
	t.Fatalf("no span %q among %s", name, strings.Join(names, ", "))
	return nil
}

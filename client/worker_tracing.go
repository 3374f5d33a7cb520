package client

import (
	"context"
	"errors"
	"fmt"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// The span a worker records around each run of its handler, by the
// OpenTelemetry messaging conventions: `process <queue>`, kind consumer.
// It uses only the OpenTelemetry API, with the TracerProvider the program
// gives (WorkerConfig.TracerProvider) or the global one, which does
// nothing until the program installs an SDK: the SDK links no exporter.
//
// Its parent is the job's trace context, the one the producer enqueued it
// with, and it links that context too: the conventions ask for the link
// (a consumer may process many messages at once) and allow the parent
// when one message is processed, as here, so the job's trace shows the
// work it caused. A job without a trace context starts a trace of its
// own (or continues the span the handler's context already has, as a
// push handler's request may).

// The tracer's name: the instrumentation scope of the spans the SDK records.
const tracerName = "github.com/jobbie/jobbie/client"

// Attributes of the process span besides the messaging conventions'.
const (
	attrAttempt   = attribute.Key("jobbie.job.attempt")
	attrNamespace = attribute.Key("jobbie.namespace")
)

var w3c = propagation.TraceContext{}

// startProcess starts the process span of jc under ctx and returns the
// handler's context, which carries the span (spans the handler starts are
// its children) and its W3C form (what the handler enqueues continues
// it), and the function that ends it with the handler's error.
func startProcess(ctx context.Context, tp trace.TracerProvider, ns string, jc *JobContext) (context.Context, func(error)) {
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	opts := []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindConsumer), trace.WithAttributes(
		attribute.String("messaging.system", "jobbie"),
		attribute.String("messaging.operation.type", "process"),
		attribute.String("messaging.operation.name", "process"),
		attribute.String("messaging.destination.name", jc.Queue),
		attribute.String("messaging.message.id", jc.ID),
		attrAttempt.Int(jc.Attempt),
	)}
	if ns != "" {
		opts = append(opts, trace.WithAttributes(attrNamespace.String(ns)))
	}
	if jc.TraceParent != "" {
		carrier := propagation.MapCarrier{"traceparent": jc.TraceParent, "tracestate": jc.TraceState}
		if job := w3c.Extract(ctx, carrier); trace.SpanContextFromContext(job).IsValid() {
			ctx = job
			opts = append(opts, trace.WithLinks(trace.LinkFromContext(job)))
		}
	}
	ctx, span := tp.Tracer(tracerName).Start(ctx, spanName("process", jc.Queue), opts...)
	ctx = withSpanTrace(ctx, jc)
	return ctx, func(err error) {
		if err != nil {
			span.SetAttributes(attribute.String("error.type", errorType(err)))
			span.SetStatus(codes.Error, err.Error())
		}
		span.End()
	}
}

// withSpanTrace makes the W3C context that enqueues from ctx send the
// span ctx carries when it is a new one (a recording or sampled-out
// span of an SDK); with no SDK the span is the job's own context, and
// the job's traceparent and tracestate go on as they came.
func withSpanTrace(ctx context.Context, jc *JobContext) context.Context {
	sc := trace.SpanContextFromContext(ctx)
	if !sc.IsValid() || sc.IsRemote() {
		return withJobTrace(ctx, jc)
	}
	carrier := propagation.MapCarrier{}
	w3c.Inject(ctx, carrier)
	return WithTraceParent(ctx, carrier.Get("traceparent"), carrier.Get("tracestate"))
}

// errorType is the low-cardinality error.type of a handler's failure:
// the cause the worker knows by name, or the error's Go type.
func errorType(err error) string {
	var p *panicError
	switch {
	case errors.As(err, &p):
		return "panic"
	case errors.Is(err, ErrJobCancelled):
		return "cancelled"
	case errors.Is(err, ErrLeaseLost):
		return "lease_lost"
	case errors.Is(err, ErrWorkerShutdown):
		return "worker_shutdown"
	case errors.Is(err, ErrDeliveryAborted):
		return "delivery_aborted"
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	}
	return fmt.Sprintf("%T", err)
}

func spanName(op, queue string) string {
	if queue == "" {
		return op
	}
	return op + " " + queue
}

// causeOf is the error the span reports: a handler that gave up because
// its context ended says only "context canceled"; the context's cause
// (ErrJobCancelled, ErrLeaseLost, ErrWorkerShutdown …) says why.
func causeOf(ctx context.Context, err error) error {
	if err != nil && errors.Is(err, context.Canceled) {
		if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.Canceled) {
			return fmt.Errorf("%w: %w", err, cause)
		}
	}
	return err
}

package client

import "context"

// A W3C trace context (https://www.w3.org/TR/trace-context/) carried in
// a context.Context, so that a job enqueued inside a traced operation,
// or inside a handler, continues that trace without naming it on every
// request. The context keeps the two header values only; the worker's
// process span (worker_tracing.go) turns a job's into an OpenTelemetry
// span, and a program bridges a span of its own in with the W3C
// propagator (docs/api/jobs.md, "Trace context").

type traceKey struct{}

type traceContext struct{ parent, state string }

// WithTraceParent returns a copy of ctx carrying the trace context
// traceparent and tracestate (tracestate may be ""). Enqueue and
// EnqueueBatch send it with every job (and a batch's callback) whose
// request names no TraceParent; a chain's steps continue its first
// job's. traceparent "" carries none: the copy has no trace context.
func WithTraceParent(ctx context.Context, traceparent, tracestate string) context.Context {
	if traceparent == "" {
		return context.WithValue(ctx, traceKey{}, traceContext{})
	}
	return context.WithValue(ctx, traceKey{}, traceContext{traceparent, tracestate})
}

// TraceParentFrom is the trace context ctx carries: set by
// WithTraceParent, or by the worker runtime for a handler (its job's).
// traceparent is "" when it carries none.
func TraceParentFrom(ctx context.Context) (traceparent, tracestate string) {
	tc, _ := ctx.Value(traceKey{}).(traceContext)
	return tc.parent, tc.state
}

// traced fills in the trace context of ctx where the request names none
// (TraceParent ""); the request's own wins, tracestate with it.
func traced(ctx context.Context, parent, state *string) {
	if *parent != "" {
		return
	}
	if p, s := TraceParentFrom(ctx); p != "" {
		*parent, *state = p, s
	}
}

// withJobTrace is the context a handler runs in: its job's trace
// context, when the job has one, so that what it enqueues continues the
// job's trace.
func withJobTrace(ctx context.Context, jc *JobContext) context.Context {
	if jc.TraceParent == "" {
		return ctx
	}
	return WithTraceParent(ctx, jc.TraceParent, jc.TraceState)
}

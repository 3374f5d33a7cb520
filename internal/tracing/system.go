package tracing

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// SystemSpan is one of Jobbie's own spans in flight (a gateway's hop, a
// shard's handling of a request); the zero SystemSpan (tracing off) does
// nothing.
type SystemSpan struct {
	span trace.Span
}

// System starts a system span named name at start. Its parent is, in this
// order: the upstream system span (sysParent, the traceparent a gateway
// sends a shard as wire.SystemTraceParentHeader); the tenant's trace
// context (parent, state) when the operator shares system spans; else it
// starts a trace of the operator's own, linked to the tenant's context so
// the operator can follow it. Shared, it carries namespace ns, so ns's
// endpoint receives it too.
func (t *Tracer) System(name string, kind trace.SpanKind, start time.Time, sysParent, parent, state, ns string) SystemSpan {
	if t == nil {
		return SystemSpan{}
	}
	ctx := context.Background()
	opts := []trace.SpanStartOption{trace.WithSpanKind(kind), trace.WithTimestamp(start)}
	tenant := spanContextOf(parent, state)
	switch up := spanContextOf(sysParent, ""); {
	case up.IsValid():
		ctx = trace.ContextWithRemoteSpanContext(ctx, up)
	case t.share && tenant.IsValid():
		ctx = trace.ContextWithRemoteSpanContext(ctx, tenant)
	case tenant.IsValid():
		opts = append(opts, trace.WithLinks(trace.Link{SpanContext: tenant}))
	}
	if t.share && ns != "" {
		opts = append(opts, trace.WithAttributes(appendNamespace(nil, ns)...))
	}
	_, span := t.tracer.Start(ctx, name, opts...)
	return SystemSpan{span: span}
}

// TraceParent is the span's context as a traceparent, for the next hop;
// "" when tracing is off or the span is not sampled.
func (s SystemSpan) TraceParent() string {
	if s.span == nil || !s.span.SpanContext().IsSampled() {
		return ""
	}
	return TraceParent(s.span.SpanContext())
}

// End ends the span, named name now that the route is known ("" keeps
// its name), with the request's HTTP status, and errType (the error
// code) when it failed.
func (s SystemSpan) End(name string, status int, errType string) {
	if s.span == nil {
		return
	}
	if name != "" {
		s.span.SetName(name)
	}
	s.span.SetAttributes(attribute.Int("http.response.status_code", status))
	if errType != "" {
		s.span.SetAttributes(AttrErrorType.String(errType))
		s.span.SetStatus(codes.Error, errType)
	}
	s.span.End()
}

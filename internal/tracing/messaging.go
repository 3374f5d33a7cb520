package tracing

import (
	"context"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// The attributes of the messaging semantic conventions Jobbie sets, and
// its own tenant and namespace attributes, by which namespaces.go routes
// a span.
const (
	AttrSystem       = attribute.Key("messaging.system")
	AttrOperation    = attribute.Key("messaging.operation.type")
	AttrOpName       = attribute.Key("messaging.operation.name")
	AttrDestination  = attribute.Key("messaging.destination.name")
	AttrMessageID    = attribute.Key("messaging.message.id")
	AttrBatchCount   = attribute.Key("messaging.batch.message_count")
	AttrErrorType    = attribute.Key("error.type")
	AttrTenant       = attribute.Key("jobbie.tenant.id")
	AttrNamespace    = attribute.Key("jobbie.namespace")
	AttrOutcome      = attribute.Key("jobbie.job.state")
	systemJobbie     = "jobbie"
	maxMessagesNamed = 128 // links on a receive, and on a send of a batch
)

// Message is one job as a messaging span sees it: its id, its queue and
// the trace context it was enqueued with ("" when none).
type Message struct {
	ID, Queue     string
	Parent, State string
}

// Send records `send <queue>` for an enqueue of msgs in namespace ns,
// from start to now: a child of the request's trace context (parent,
// state; a new trace without one). A batch sets
// messaging.batch.message_count, names its queue only when all its jobs
// share one, and links the jobs that name a trace context of their own;
// a single job sets messaging.message.id. errType is the refusal's error
// code, "" on success.
func (t *Tracer) Send(ns, parent, state string, batch bool, msgs []Message, start time.Time, errType string) {
	if t == nil {
		return
	}
	ctx := contextOf(parent, state)
	attrs := []attribute.KeyValue{AttrSystem.String(systemJobbie), AttrOperation.String("send"), AttrOpName.String("send")}
	attrs = appendNamespace(attrs, ns)
	queue := sameQueue(msgs)
	if queue != "" {
		attrs = append(attrs, AttrDestination.String(queue))
	}
	var links []trace.Link
	if batch {
		attrs = append(attrs, AttrBatchCount.Int(len(msgs)))
		for _, m := range msgs {
			if m.Parent != "" && m.Parent != parent && len(links) < maxMessagesNamed {
				if sc := spanContextOf(m.Parent, m.State); sc.IsValid() {
					links = append(links, trace.Link{SpanContext: sc, Attributes: []attribute.KeyValue{AttrMessageID.String(m.ID)}})
				}
			}
		}
	} else if len(msgs) == 1 {
		attrs = append(attrs, AttrMessageID.String(msgs[0].ID))
	}
	t.record(ctx, spanName("send", queue), trace.SpanKindProducer, start, attrs, links, errType)
}

// Receive records `receive <queue>` for a fetch that leased msgs in
// namespace ns: a child of the fetch's own trace context (the worker's,
// if it sent one), linked to each job's trace context, the one it was
// sent with (the first maxMessagesNamed of them).
func (t *Tracer) Receive(ns, parent, state string, msgs []Message, start time.Time) {
	if t == nil || len(msgs) == 0 {
		return
	}
	queue := sameQueue(msgs)
	attrs := []attribute.KeyValue{AttrSystem.String(systemJobbie), AttrOperation.String("receive"), AttrOpName.String("receive"),
		AttrBatchCount.Int(len(msgs))}
	attrs = appendNamespace(attrs, ns)
	if queue != "" {
		attrs = append(attrs, AttrDestination.String(queue))
	}
	if len(msgs) == 1 {
		attrs = append(attrs, AttrMessageID.String(msgs[0].ID))
	}
	links := make([]trace.Link, 0, min(len(msgs), maxMessagesNamed))
	for _, m := range msgs {
		if len(links) == maxMessagesNamed {
			break
		}
		if sc := spanContextOf(m.Parent, m.State); sc.IsValid() {
			links = append(links, trace.Link{SpanContext: sc, Attributes: []attribute.KeyValue{AttrMessageID.String(m.ID)}})
		}
	}
	t.record(contextOf(parent, state), spanName("receive", queue), trace.SpanKindClient, start, attrs, links, "")
}

// Settle records `settle <queue>` for an ack or a fail (op) of m in
// namespace ns: a child of the job's trace context, so the tenant's trace
// shows its job settled; outcome is the state the job went to, errType the
// refusal's error code ("" on success).
func (t *Tracer) Settle(ns, op string, m Message, outcome string, start time.Time, errType string) {
	if t == nil {
		return
	}
	attrs := []attribute.KeyValue{AttrSystem.String(systemJobbie), AttrOperation.String("settle"), AttrOpName.String(op),
		AttrDestination.String(m.Queue), AttrMessageID.String(m.ID)}
	attrs = appendNamespace(attrs, ns)
	if outcome != "" {
		attrs = append(attrs, AttrOutcome.String(outcome))
	}
	t.record(contextOf(m.Parent, m.State), spanName("settle", m.Queue), trace.SpanKindClient, start, attrs, nil, errType)
}

func (t *Tracer) record(ctx context.Context, name string, kind trace.SpanKind, start time.Time, attrs []attribute.KeyValue, links []trace.Link, errType string) {
	if errType != "" {
		attrs = append(attrs, AttrErrorType.String(errType))
	}
	_, span := t.tracer.Start(ctx, name, trace.WithSpanKind(kind), trace.WithTimestamp(start), trace.WithAttributes(attrs...), trace.WithLinks(links...))
	if errType != "" {
		span.SetStatus(codes.Error, errType)
	}
	span.End()
}

// appendNamespace names shard namespace ns ("<tenant id>/<namespace>")
// by its two parts: the namespace as its tenant knows it, and the tenant.
func appendNamespace(attrs []attribute.KeyValue, ns string) []attribute.KeyValue {
	tenant, name, ok := strings.Cut(ns, "/")
	if !ok {
		return append(attrs, AttrNamespace.String(ns))
	}
	return append(attrs, AttrTenant.String(tenant), AttrNamespace.String(name))
}

func spanName(op, queue string) string {
	if queue == "" {
		return op
	}
	return op + " " + queue
}

// sameQueue is the queue every message names, or "".
func sameQueue(msgs []Message) string {
	if len(msgs) == 0 {
		return ""
	}
	q := msgs[0].Queue
	for _, m := range msgs[1:] {
		if m.Queue != q {
			return ""
		}
	}
	return q
}

// contextOf is a context whose remote parent is the W3C trace context
// (parent, state), or the background when there is none.
func contextOf(parent, state string) context.Context {
	sc := spanContextOf(parent, state)
	if !sc.IsValid() {
		return context.Background()
	}
	return trace.ContextWithRemoteSpanContext(context.Background(), sc)
}

// spanContextOf reads a traceparent of version 00 (already checked by
// wire.CheckTraceParent where it came in) and its tracestate; anything
// else is the invalid SpanContext.
func spanContextOf(parent, state string) trace.SpanContext {
	if len(parent) != 55 {
		return trace.SpanContext{}
	}
	tid, err := trace.TraceIDFromHex(parent[3:35])
	if err != nil {
		return trace.SpanContext{}
	}
	sid, err := trace.SpanIDFromHex(parent[36:52])
	if err != nil {
		return trace.SpanContext{}
	}
	flags := trace.TraceFlags(hexNibble(parent[53])<<4 | hexNibble(parent[54]))
	var ts trace.TraceState
	if state != "" {
		// A copy: a request's header value may alias its buffer, and the
		// span outlives the request. A bad one was refused on enqueue.
		ts, _ = trace.ParseTraceState(strings.Clone(state))
	}
	return trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: flags, TraceState: ts, Remote: true})
}

func hexNibble(c byte) byte {
	switch {
	case c >= '0' && c <= '9':
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	}
	return 0
}

// TraceParent is sc as a traceparent header's value.
func TraceParent(sc trace.SpanContext) string {
	return "00-" + sc.TraceID().String() + "-" + sc.SpanID().String() + "-" + sc.TraceFlags().String()
}

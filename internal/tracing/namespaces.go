package tracing

import (
	"context"
	"errors"
	"sync"
	"time"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/jobbie/jobbie/internal/outbound"
)

// Endpoint is where a namespace's spans go: the URL its OTLP/HTTP
// collector takes traces at ("" for none) and the namespace's egress
// allow-list, which the URL must pass at every export.
type Endpoint struct {
	URL   string
	Allow []string
}

// Lookup returns a namespace's Endpoint as its settings say now.
type Lookup func(ns string) Endpoint

// lookupEvery bounds how often a namespace's endpoint is read again: a
// changed or removed endpoint is followed within it.
const lookupEvery = time.Second

// Namespaces is the span processor that sends each namespace's spans,
// the ones carrying its AttrTenant and AttrNamespace (its messaging spans, and its system
// spans when the operator shares them), to that namespace's own
// endpoint and to no other. Every export is a request through the
// egress guard, so a namespace's endpoint is held to the outbound rules
// (public addresses only unless the operator allows private ones, https,
// its egress allow-list) at the moment spans are sent.
type Namespaces struct {
	client *outbound.Client
	lookup Lookup
	now    func() time.Time // time.Now; tests move it

	mu     sync.Mutex
	byNS   map[string]*nsExport
	closed bool
}

type nsExport struct {
	endpoint Endpoint
	read     time.Time
	proc     sdktrace.SpanProcessor // nil: the namespace names no endpoint
}

// NewNamespaces returns the processor; client is the process's egress
// guard, lookup reads a namespace's endpoint.
func NewNamespaces(client *outbound.Client, lookup Lookup) *Namespaces {
	return &Namespaces{client: client, lookup: lookup, now: time.Now, byNS: map[string]*nsExport{}}
}

// OnStart does nothing: spans are routed once ended.
func (n *Namespaces) OnStart(context.Context, sdktrace.ReadWriteSpan) {}

// OnEnd hands s to its namespace's exporter, if s names a namespace and
// that namespace an endpoint.
func (n *Namespaces) OnEnd(s sdktrace.ReadOnlySpan) {
	tenant, ns := "", ""
	for _, a := range s.Attributes() {
		switch a.Key {
		case AttrTenant:
			tenant = a.Value.AsString()
		case AttrNamespace:
			ns = a.Value.AsString()
		}
	}
	if ns == "" {
		return
	}
	if tenant != "" {
		ns = tenant + "/" + ns // the shard namespace: two tenants' "default" are apart
	}
	if p := n.processorOf(ns); p != nil {
		p.OnEnd(s)
	}
}

// processorOf is ns's exporter as its endpoint is now (read at most once
// per lookupEvery), made anew when the endpoint changed.
func (n *Namespaces) processorOf(ns string) sdktrace.SpanProcessor {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return nil
	}
	e := n.byNS[ns]
	now := n.now()
	if e != nil && now.Sub(e.read) < lookupEvery {
		return e.proc
	}
	ep := n.lookup(ns)
	if e != nil && sameEndpoint(e.endpoint, ep) {
		e.read = now
		return e.proc
	}
	if e != nil && e.proc != nil {
		go func(p sdktrace.SpanProcessor) { _ = p.Shutdown(context.Background()) }(e.proc) // sends what it holds to the old endpoint
	}
	e = &nsExport{endpoint: ep, read: now}
	if ep.URL != "" {
		e.proc = sdktrace.NewBatchSpanProcessor(otlptrace.NewUnstarted(&nsClient{ns: ns, endpoint: ep, out: n.client}))
	}
	n.byNS[ns] = e
	return e.proc
}

func sameEndpoint(a, b Endpoint) bool {
	if a.URL != b.URL || len(a.Allow) != len(b.Allow) {
		return false
	}
	for i := range a.Allow {
		if a.Allow[i] != b.Allow[i] {
			return false
		}
	}
	return true
}

// forget makes the next span of ns read its endpoint again: its settings
// changed on this node.
func (n *Namespaces) forget(ns string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if e := n.byNS[ns]; e != nil {
		e.read = time.Time{}
	}
}

// Shutdown sends what each namespace's exporter holds and stops them.
func (n *Namespaces) Shutdown(ctx context.Context) error {
	n.mu.Lock()
	n.closed = true
	procs := n.processors()
	n.byNS = map[string]*nsExport{}
	n.mu.Unlock()
	var errs []error
	for _, p := range procs {
		errs = append(errs, p.Shutdown(ctx))
	}
	return errors.Join(errs...)
}

// ForceFlush sends what each namespace's exporter holds now.
func (n *Namespaces) ForceFlush(ctx context.Context) error {
	n.mu.Lock()
	procs := n.processors()
	n.mu.Unlock()
	var errs []error
	for _, p := range procs {
		errs = append(errs, p.ForceFlush(ctx))
	}
	return errors.Join(errs...)
}

func (n *Namespaces) processors() []sdktrace.SpanProcessor {
	out := make([]sdktrace.SpanProcessor, 0, len(n.byNS))
	for _, e := range n.byNS {
		if e.proc != nil {
			out = append(out, e.proc)
		}
	}
	return out
}

// nsClient sends one namespace's spans to its endpoint as an OTLP/HTTP
// protobuf ExportTraceServiceRequest, through the egress guard.
type nsClient struct {
	ns       string
	endpoint Endpoint
	out      *outbound.Client
}

func (c *nsClient) Start(context.Context) error { return nil }
func (c *nsClient) Stop(context.Context) error  { return nil }

// nsResource is the resource a namespace's collector sees: the service
// alone, never the operator's host, process or deployment attributes.
var nsResource = &resourcepb.Resource{Attributes: []*commonpb.KeyValue{
	{Key: "service.name", Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: "jobbie"}}},
}}

func (c *nsClient) UploadTraces(ctx context.Context, spans []*tracepb.ResourceSpans) error {
	for _, rs := range spans {
		rs.Resource, rs.SchemaUrl = nsResource, ""
	}
	body, err := proto.Marshal(&coltracepb.ExportTraceServiceRequest{ResourceSpans: spans})
	if err != nil {
		return err
	}
	_, err = c.out.Do(ctx, outbound.Request{
		Tenant: "otlp/" + c.ns, URL: c.endpoint.URL, AllowHosts: c.endpoint.Allow,
		Header: map[string][]string{"Content-Type": {"application/x-protobuf"}},
		Body:   body, Timeout: 10 * time.Second,
	})
	return err
}

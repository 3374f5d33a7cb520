// Package tracing emits Jobbie's OpenTelemetry spans and exports them over
// OTLP/HTTP. Two kinds of span, kept apart:
//
//   - messaging spans (messaging.go: send, receive, settle, by the
//     messaging semantic conventions) sit in the tenant's trace, the one
//     its traceparent names, and are all a tenant's collector ever gets;
//   - system spans (system.go: a gateway's hop to a shard, a shard's
//     handling of it) are the operator's: their own traces, unless the
//     operator shares them (Config.ShareSystem), which puts them in the
//     tenant's trace and with its namespace's spans.
//
// The operator's exporter is configured by the standard OTEL_* variables;
// without an endpoint there is no Tracer at all (FromEnv returns nil), and
// every method of a nil *Tracer returns at once, so tracing off costs a
// nil check. A namespace's own endpoint (namespaces.go) receives the spans
// that carry its namespace, sent through the egress guard
// (internal/outbound) under its egress allow-list.
package tracing

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// Config is what a role tells its Tracer beside the OTEL_* variables.
type Config struct {
	// Service is service.name when OTEL_SERVICE_NAME does not set it
	// ("jobbie-gateway", "jobbie-shard").
	Service string
	// ShareSystem puts system spans in the tenant's trace (children of its
	// traceparent) and sends them to its namespace's endpoint too.
	ShareSystem bool
	// Namespaces, when set, sends each namespace's spans to the endpoint
	// it names (a shard's; nil: none are).
	Namespaces *Namespaces
	// Exporter replaces the OTEL_* exporter (tests of this package).
	Exporter sdktrace.SpanExporter
}

// Tracer emits Jobbie's spans. A nil *Tracer is tracing off.
type Tracer struct {
	provider *sdktrace.TracerProvider
	tracer   trace.Tracer
	share    bool
	ns       *Namespaces
}

// Configured reports whether the OTEL_* variables ask for traces: an
// OTLP endpoint is named (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or
// OTEL_EXPORTER_OTLP_ENDPOINT), and neither OTEL_SDK_DISABLED=true nor
// OTEL_TRACES_EXPORTER=none turns them off.
func Configured() bool {
	if strings.EqualFold(strings.TrimSpace(os.Getenv("OTEL_SDK_DISABLED")), "true") {
		return false
	}
	if e := strings.TrimSpace(os.Getenv("OTEL_TRACES_EXPORTER")); e == "none" {
		return false
	}
	return os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != "" || os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != ""
}

// FromEnv returns the Tracer the OTEL_* variables configure, or nil (and
// no error) when they configure none (Configured). The sampler is
// OTEL_TRACES_SAMPLER's (default parentbased_always_on: a tenant's
// sampled flag is honoured); the resource is OTEL_SERVICE_NAME's and
// OTEL_RESOURCE_ATTRIBUTES'.
func FromEnv(ctx context.Context, cfg Config) (*Tracer, error) {
	if cfg.Exporter == nil && !Configured() {
		return nil, nil
	}
	if err := checkEnv(); err != nil {
		return nil, err
	}
	exp := cfg.Exporter
	if exp == nil {
		var err error
		if exp, err = otlptracehttp.New(ctx); err != nil {
			return nil, fmt.Errorf("tracing: OTLP exporter: %w", err)
		}
	}
	res, err := resource.Merge(resource.Default(), resource.Environment())
	if err != nil {
		return nil, fmt.Errorf("tracing: resource: %w", err)
	}
	if cfg.Service != "" && os.Getenv("OTEL_SERVICE_NAME") == "" && !strings.Contains(os.Getenv("OTEL_RESOURCE_ATTRIBUTES"), "service.name=") {
		res, _ = resource.Merge(res, resource.NewSchemaless(attribute.String("service.name", cfg.Service)))
	}
	opts := []sdktrace.TracerProviderOption{sdktrace.WithBatcher(exp), sdktrace.WithResource(res)}
	if cfg.Namespaces != nil {
		opts = append(opts, sdktrace.WithSpanProcessor(cfg.Namespaces))
	}
	p := sdktrace.NewTracerProvider(opts...)
	return &Tracer{provider: p, tracer: p.Tracer("github.com/jobbie/jobbie"), share: cfg.ShareSystem, ns: cfg.Namespaces}, nil
}

// checkEnv refuses what the exporter would otherwise ignore: only
// OTLP over HTTP with protobuf is built in.
func checkEnv() error {
	for _, k := range []string{"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"} {
		if v := strings.TrimSpace(os.Getenv(k)); v != "" && v != "http/protobuf" {
			return fmt.Errorf("tracing: %s=%q: only http/protobuf is supported", k, v)
		}
	}
	if e := strings.TrimSpace(os.Getenv("OTEL_TRACES_EXPORTER")); e != "" && e != "otlp" {
		return fmt.Errorf("tracing: OTEL_TRACES_EXPORTER=%q: only otlp (or none) is supported", e)
	}
	return nil
}

// On reports whether t emits spans: a caller checks it before it builds
// what a span needs.
func (t *Tracer) On() bool { return t != nil }

// NamespaceChanged tells t that shard namespace ns's settings changed
// here, so its next span follows its endpoint at once rather than within
// a second.
func (t *Tracer) NamespaceChanged(ns string) {
	if t != nil && t.ns != nil {
		t.ns.forget(ns)
	}
}

// Shutdown sends what is buffered and stops t (its namespaces' exporters
// too); nil does nothing.
func (t *Tracer) Shutdown(ctx context.Context) error {
	if t == nil {
		return nil
	}
	return errors.Join(t.provider.Shutdown(ctx))
}

// ForceFlush sends what is buffered now, to the operator's exporter and
// every namespace's (tests, and a stopping role).
func (t *Tracer) ForceFlush(ctx context.Context) error {
	if t == nil {
		return nil
	}
	return t.provider.ForceFlush(ctx)
}

package tracing

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

const (
	tenantTrace  = "4bf92f3577b34da6a3ce929d0e0e4736"
	tenantParent = "00f067aa0ba902b7"
	tenantTP     = "00-" + tenantTrace + "-" + tenantParent + "-01"
)

// Without an OTLP endpoint in the OTEL_* variables there is no Tracer,
// and a nil one does nothing; an exporter this package cannot speak is
// refused, not ignored.
func TestTracingOffUnlessConfigured(t *testing.T) {
	for _, k := range []string{"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_SDK_DISABLED", "OTEL_TRACES_EXPORTER",
		"OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"} {
		t.Setenv(k, "")
	}
	tr, err := FromEnv(context.Background(), Config{Service: "jobbie-test"})
	require.NoError(t, err)
	require.Nil(t, tr)
	require.False(t, tr.On())
	tr.Send("t1/default", tenantTP, "", false, []Message{{ID: "j", Queue: "q"}}, time.Now(), "")
	tr.Receive("t1/default", "", "", []Message{{ID: "j", Queue: "q"}}, time.Now())
	tr.Settle("t1/default", "ack", Message{ID: "j"}, "completed", time.Now(), "")
	sp := tr.System("x", trace.SpanKindServer, time.Now(), "", tenantTP, "", "t1/default")
	require.Empty(t, sp.TraceParent())
	sp.End("", 200, "")
	tr.NamespaceChanged("t1/default")
	require.NoError(t, tr.ForceFlush(context.Background()))
	require.NoError(t, tr.Shutdown(context.Background()))

	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:1")
	t.Setenv("OTEL_SDK_DISABLED", "true")
	tr, err = FromEnv(context.Background(), Config{})
	require.NoError(t, err)
	require.Nil(t, tr, "OTEL_SDK_DISABLED turns it off")
	t.Setenv("OTEL_SDK_DISABLED", "")
	t.Setenv("OTEL_TRACES_EXPORTER", "none")
	tr, err = FromEnv(context.Background(), Config{})
	require.NoError(t, err)
	require.Nil(t, tr, "OTEL_TRACES_EXPORTER=none turns it off")

	t.Setenv("OTEL_TRACES_EXPORTER", "")
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
	_, err = FromEnv(context.Background(), Config{})
	require.ErrorContains(t, err, `OTEL_EXPORTER_OTLP_PROTOCOL="grpc": only http/protobuf is supported`)
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "")
	t.Setenv("OTEL_TRACES_EXPORTER", "zipkin")
	_, err = FromEnv(context.Background(), Config{})
	require.ErrorContains(t, err, `OTEL_TRACES_EXPORTER="zipkin"`)
}

// System spans: in a trace of the operator's own, linked to the tenant's,
// with no namespace to route by; shared, a child of the tenant's
// traceparent carrying the namespace; a shard's span is the gateway's
// child whatever the sharing.
func TestSystemSpansStayOutOfTheTenantsTraceUnlessShared(t *testing.T) {
	for _, share := range []bool{false, true} {
		exp := tracetest.NewInMemoryExporter()
		tr, err := FromEnv(context.Background(), Config{Exporter: exp, ShareSystem: share})
		require.NoError(t, err)
		gw := tr.System("gateway POST /api/v1/enqueue", trace.SpanKindServer, time.Now(), "", tenantTP, "", "")
		up := gw.TraceParent()
		require.NotEmpty(t, up)
		tr.System("shard POST", trace.SpanKindServer, time.Now(), up, tenantTP, "", "t1/default").End("shard POST /api/v1/enqueue", 201, "")
		gw.End("", 201, "")
		require.NoError(t, tr.ForceFlush(context.Background()))
		spans := exp.GetSpans()
		require.NoError(t, tr.Shutdown(context.Background()))
		require.Len(t, spans, 2)
		shard, gateway := spans[0], spans[1]
		require.Equal(t, "shard POST /api/v1/enqueue", shard.Name, "named once its route is known")
		require.Equal(t, gateway.SpanContext.SpanID(), shard.Parent.SpanID(), "the shard's span is the gateway's child")
		require.Equal(t, gateway.SpanContext.TraceID(), shard.SpanContext.TraceID())
		ns := attribute.NewSet(shard.Attributes...)
		if !share {
			require.NotEqual(t, tenantTrace, gateway.SpanContext.TraceID().String(), "not shared: the operator's own trace")
			require.False(t, gateway.Parent.IsValid())
			require.Len(t, gateway.Links, 1)
			require.Equal(t, tenantTrace, gateway.Links[0].SpanContext.TraceID().String(), "linked to the tenant's")
			require.False(t, ns.HasValue(AttrNamespace), "not shared: routed to no namespace")
			continue
		}
		require.Equal(t, tenantTrace, gateway.SpanContext.TraceID().String(), "shared: in the tenant's trace")
		require.Equal(t, tenantParent, gateway.Parent.SpanID().String())
		v, _ := ns.Value(AttrNamespace)
		require.Equal(t, "default", v.AsString(), "shared: routed to the namespace's endpoint")
		v, _ = ns.Value(AttrTenant)
		require.Equal(t, "t1", v.AsString())
	}
}

// A batch's send links the jobs that name a trace of their own, and a
// refused call's span says its error.type.
func TestSendOfABatch(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tr, err := FromEnv(context.Background(), Config{Exporter: exp})
	require.NoError(t, err)
	own := "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	tr.Send("t1/default", tenantTP, "", true, []Message{{ID: "a", Queue: "q", Parent: tenantTP}, {ID: "b", Queue: "r", Parent: own}}, time.Now(), "")
	tr.Send("t1/default", tenantTP, "", false, []Message{{Queue: "q", Parent: tenantTP}}, time.Now(), "payload_too_large")
	require.NoError(t, tr.ForceFlush(context.Background()))
	spans := exp.GetSpans()
	require.NoError(t, tr.Shutdown(context.Background()))
	require.Len(t, spans, 2)
	batch := spans[0]
	require.Equal(t, "send", batch.Name, "two queues: none named")
	require.Equal(t, tenantParent, batch.Parent.SpanID().String())
	set := attribute.NewSet(batch.Attributes...)
	n, _ := set.Value(AttrBatchCount)
	require.EqualValues(t, 2, n.AsInt64())
	require.False(t, set.HasValue(AttrDestination))
	require.Len(t, batch.Links, 1, "the job in a trace of its own")
	require.Equal(t, "0af7651916cd43dd8448eb211c80319c", batch.Links[0].SpanContext.TraceID().String())
	refused := spans[1]
	require.Equal(t, "send q", refused.Name)
	rs := attribute.NewSet(refused.Attributes...)
	e, _ := rs.Value(AttrErrorType)
	require.Equal(t, "payload_too_large", e.AsString())
	require.Equal(t, "Error", refused.Status.Code.String())
}

package main

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/jobbie/jobbie/wire"
)

// tenantAPI calls dev's gateway as a tenant's key in one namespace.
type tenantAPI struct {
	t       *testing.T
	gateway string
	key, ns string
}

func (a tenantAPI) call(method, path string, body any, hdr ...string) (int, map[string]any) {
	a.t.Helper()
	raw, err := json.Marshal(body)
	require.NoError(a.t, err)
	req, err := http.NewRequest(method, a.gateway+path, bytes.NewReader(raw))
	require.NoError(a.t, err)
	req.Header.Set("Authorization", "Bearer "+a.key)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(wire.NamespaceHeader, a.ns)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	req.Close = true
	resp, err := http.DefaultClient.Do(req)
	require.NoError(a.t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(a.t, err)
	var out map[string]any
	if len(b) > 0 {
		require.NoError(a.t, json.Unmarshal(b, &out), "%s", b)
	}
	return resp.StatusCode, out
}

// runJob enqueues one job on queue with traceparent tp, fetches it as
// worker w and acks it; it returns the job's id.
func (a tenantAPI) runJob(queue, tp, w string) string {
	a.t.Helper()
	st, out := a.call(http.MethodPost, "/api/v1/enqueue", map[string]any{"queue": queue, "payload": map[string]any{"n": 1}}, wire.TraceParentHeader, tp)
	require.Equal(a.t, http.StatusCreated, st, "%v", out)
	id := out["job_id"].(string)
	st, job := a.call(http.MethodPost, "/api/v1/fetch", map[string]any{"queues": []string{queue}, "worker_id": w, "timeout": 5})
	require.Equal(a.t, http.StatusOK, st, "%v", job)
	require.Equal(a.t, id, job["job_id"])
	require.Equal(a.t, tp, job["traceparent"], "the job's trace context comes back on fetch")
	st, out = a.call(http.MethodPost, "/api/v1/ack/"+id, map[string]any{"worker_id": w, "lease_token": job["lease_token"]})
	require.Equal(a.t, http.StatusOK, st, "%v", out)
	return id
}

// traceparent is a sampled traceparent with trace id trace and parent id
// parent (hex).
func traceparent(trace, parent string) string { return "00-" + trace + "-" + parent + "-01" }

// One enqueue, fetch and ack through dev's gateway and shard, exported to
// an OTLP/HTTP receiver named by OTEL_EXPORTER_OTLP_ENDPOINT: the
// messaging spans sit in the tenant's trace (send and settle children of
// its traceparent, receive linked to it) with the conventions'
// attributes, a refused ack's settle says its error.type, a batch's send
// counts its jobs, and Jobbie's own spans (the gateway's, the shard's
// child of it) are in traces of their own, never the tenant's. Then each
// of two namespaces names its own OTLP endpoint: each receives its own
// jobs' messaging spans, none of the other's and none of Jobbie's own,
// with a resource that says nothing of the operator's hosts.
func TestTracesFromEnqueueToAckThroughGatewayAndShard(t *testing.T) {
	operator := newOTLPReceiver(t, false)
	nsA, nsB := newOTLPReceiver(t, true), newOTLPReceiver(t, true)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", operator.srv.URL)
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "50") // ms: export soon, the test waits on the receiver
	t.Setenv("OTEL_SERVICE_NAME", "")
	t.Setenv("OTEL_RESOURCE_ATTRIBUTES", "deployment.environment=ci")
	d := startDevCLI(t, "--push-allow-private", "--push-ca-file", nsA.caFile(t))
	api := tenantAPI{t: t, gateway: d.gateway, key: readKey(t, d.ownerFile), ns: "default"}

	trace, parent := "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	tp := traceparent(trace, parent)
	id := api.runJob("emails", tp, "w1")
	// The same ack again is refused: its settle span says why.
	st, _ := api.call(http.MethodPost, "/api/v1/ack/"+id, map[string]any{"worker_id": "w1"})
	require.GreaterOrEqual(t, st, 400)
	// A batch of two jobs in another trace.
	batchTrace := "0af7651916cd43dd8448eb211c80319c"
	st, out := api.call(http.MethodPost, "/api/v1/enqueue/batch", map[string]any{"jobs": []map[string]any{
		{"queue": "reports", "payload": 1}, {"queue": "reports", "payload": 2}}}, wire.TraceParentHeader, traceparent(batchTrace, "b7ad6b7169203331"))
	require.Equal(t, http.StatusCreated, st, "%v", out)

	spans := operator.waitFor(t, "the job's send, receive and two settles, the batch's send, and the gateway's spans", func(s []gotSpan) bool {
		return len(named(s, "send emails", trace)) == 1 && len(named(s, "receive emails", "")) == 1 && len(named(s, "settle emails", trace)) == 2 &&
			len(named(s, "send reports", batchTrace)) == 1 && len(named(s, "gateway POST /api/v1/ack/:id", "")) == 2 &&
			len(named(s, "shard POST /api/v1/enqueue", "")) >= 1
	})

	send := named(spans, "send emails", trace)[0]
	require.Equal(t, "jobbie-shard", send.Service)
	require.Equal(t, "ci", send.Resource["deployment.environment"], "the operator's resource comes from OTEL_RESOURCE_ATTRIBUTES")
	require.Equal(t, parent, send.ParentID(), "send is a child of the tenant's traceparent")
	require.Equal(t, tracepb.Span_SPAN_KIND_PRODUCER, send.GetKind())
	messaging := func(s gotSpan, op string) {
		t.Helper()
		require.Equal(t, "jobbie", s.Attr("messaging.system"), s.GetName())
		require.Equal(t, op, s.Attr("messaging.operation.type"), s.GetName())
		require.Equal(t, "default", s.Attr("jobbie.namespace"), s.GetName())
	}
	messaging(send, "send")
	require.Equal(t, "emails", send.Attr("messaging.destination.name"))
	require.Equal(t, id, send.Attr("messaging.message.id"))
	require.Equal(t, int64(-1), send.Int("messaging.batch.message_count"), "one job is no batch")
	require.Empty(t, send.Attr("error.type"))

	recv := named(spans, "receive emails", "")[0]
	messaging(recv, "receive")
	require.NotEqual(t, trace, recv.TraceID(), "the fetch sent no traceparent: receive is the worker's, linked to the job's")
	require.Equal(t, id, recv.Attr("messaging.message.id"))
	require.Equal(t, int64(1), recv.Int("messaging.batch.message_count"))
	require.Len(t, recv.GetLinks(), 1)
	link := recv.GetLinks()[0]
	require.Equal(t, trace, hex.EncodeToString(link.GetTraceId()), "receive links the job's send context")
	require.Equal(t, parent, hex.EncodeToString(link.GetSpanId()))
	require.Equal(t, id, attrOf(link.GetAttributes(), "messaging.message.id"))

	var acked, refused gotSpan
	for _, s := range named(spans, "settle emails", trace) {
		messaging(s, "settle")
		require.Equal(t, parent, s.ParentID(), "settle is in the tenant's trace")
		require.Equal(t, id, s.Attr("messaging.message.id"))
		require.Equal(t, "ack", s.Attr("messaging.operation.name"))
		if s.Attr("error.type") == "" {
			acked = s
		} else {
			refused = s
		}
	}
	require.NotNil(t, acked.Span, "one ack settled the job")
	require.Equal(t, wire.StateCompleted, acked.Attr("jobbie.job.state"))
	require.NotNil(t, refused.Span, "the second ack was refused")
	require.Equal(t, tracepb.Status_STATUS_CODE_ERROR, refused.GetStatus().GetCode())

	batch := named(spans, "send reports", batchTrace)[0]
	messaging(batch, "send")
	require.Equal(t, int64(2), batch.Int("messaging.batch.message_count"))
	require.Equal(t, "reports", batch.Attr("messaging.destination.name"))

	// Jobbie's own spans: the gateway's, and the shard's as its child, in a
	// trace of the operator's, linked to the tenant's.
	var gwEnqueue gotSpan
	for _, s := range named(spans, "gateway POST /api/v1/enqueue", "") {
		if len(s.GetLinks()) == 1 && hex.EncodeToString(s.GetLinks()[0].GetTraceId()) == trace {
			gwEnqueue = s
		}
	}
	require.NotNil(t, gwEnqueue.Span, "the gateway's span of the enqueue links the tenant's trace")
	require.Equal(t, "jobbie-gateway", gwEnqueue.Service)
	require.NotEqual(t, trace, gwEnqueue.TraceID())
	require.Empty(t, gwEnqueue.GetParentSpanId(), "not shared: a trace of the operator's own")
	shardEnqueue := named(spans, "shard POST /api/v1/enqueue", gwEnqueue.TraceID())
	require.Len(t, shardEnqueue, 1, "the shard's span is the gateway's child")
	require.Equal(t, gwEnqueue.SpanID(), shardEnqueue[0].ParentID())
	for _, s := range spans {
		if s.TraceID() == trace {
			require.Contains(t, []string{"send emails", "settle emails"}, s.GetName(), "the tenant's trace holds its messaging spans only")
		}
	}

	// Each namespace names its own endpoint (a bad one refused, naming
	// the field, and nothing kept).
	_, err := d.owner.CreateNamespace(context.Background(), "billing")
	require.NoError(t, err)
	other := tenantAPI{t: t, gateway: d.gateway, key: api.key, ns: "billing"}
	st, out = api.call(http.MethodPut, "/api/v1/tracing", map[string]any{"otlp_endpoint": "http://collector.example.com/v1/traces"})
	require.Equal(t, http.StatusBadRequest, st, "%v", out)
	require.Equal(t, "otlp_endpoint", out["error"].(map[string]any)["field"], "%v", out)
	st, out = api.call(http.MethodGet, "/api/v1/tracing", nil)
	require.Equal(t, http.StatusOK, st, "%v", out)
	require.Equal(t, "", out["otlp_endpoint"])
	for _, ns := range []struct {
		api tenantAPI
		url string
	}{{api, nsA.URL}, {other, nsB.URL}} {
		st, out = ns.api.call(http.MethodPut, "/api/v1/tracing", map[string]any{"otlp_endpoint": ns.url})
		require.Equal(t, http.StatusOK, st, "%v", out)
		require.Equal(t, ns.url, out["otlp_endpoint"])
	}

	traceA, traceB := "11111111111111111111111111111111", "22222222222222222222222222222222"
	idA := api.runJob("emails", traceparent(traceA, "aaaaaaaaaaaaaaaa"), "wa")
	idB := other.runJob("emails", traceparent(traceB, "bbbbbbbbbbbbbbbb"), "wb")
	full := func(trace, id string) func([]gotSpan) bool {
		return func(s []gotSpan) bool {
			got := 0
			for _, name := range []string{"send emails", "settle emails"} {
				got += len(named(s, name, trace))
			}
			for _, r := range named(s, "receive emails", "") {
				if r.Attr("messaging.message.id") == id {
					got++
				}
			}
			return got == 3
		}
	}
	gotA := nsA.waitFor(t, "namespace default's spans of its job", full(traceA, idA))
	gotB := nsB.waitFor(t, "namespace billing's spans of its job", full(traceB, idB))
	operator.waitFor(t, "both namespaces' spans, the operator's too", func(s []gotSpan) bool { return full(traceA, idA)(s) && full(traceB, idB)(s) })
	for _, c := range []struct {
		got          []gotSpan
		ns, notTrace string
	}{{gotA, "default", traceB}, {gotB, "billing", traceA}} {
		for _, s := range c.got {
			require.Equal(t, c.ns, s.Attr("jobbie.namespace"), "%s's endpoint got a span of another namespace: %s", c.ns, s.GetName())
			require.NotEqual(t, c.notTrace, s.TraceID(), "%s's endpoint got the other namespace's trace", c.ns)
			require.Contains(t, []string{"send emails", "receive emails", "settle emails"}, s.GetName(), "%s's endpoint got a system span", c.ns)
			require.Equal(t, map[string]string{"service.name": "jobbie"}, s.Resource, "a namespace's collector learns nothing of the operator's hosts")
		}
	}
}

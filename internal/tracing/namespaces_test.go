package tracing

import (
	"context"
	"crypto/x509"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/jobbie/jobbie/internal/outbound"
)

// collector is a TLS OTLP/HTTP receiver of one namespace's spans.
type collector struct {
	srv *httptest.Server
	mu  sync.Mutex
	got []*coltracepb.ExportTraceServiceRequest
}

func newCollector(t *testing.T) *collector {
	c := &collector{}
	c.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var in coltracepb.ExportTraceServiceRequest
		if r.Header.Get("Content-Type") != "application/x-protobuf" || proto.Unmarshal(raw, &in) != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		c.mu.Lock()
		c.got = append(c.got, &in)
		c.mu.Unlock()
	}))
	t.Cleanup(c.srv.Close)
	return c
}

// names are the span names received, with their namespace attribute.
func (c *collector) names() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, r := range c.got {
		for _, rs := range r.GetResourceSpans() {
			for _, ss := range rs.GetScopeSpans() {
				for _, s := range ss.GetSpans() {
					ns := ""
					for _, a := range s.GetAttributes() {
						if a.GetKey() == string(AttrTenant) || a.GetKey() == string(AttrNamespace) {
							ns += "/" + a.GetValue().GetStringValue()
						}
					}
					out = append(out, s.GetName()+" "+ns)
				}
			}
		}
	}
	return out
}

// Two tenants' namespaces named alike, one endpoint each: each gets its
// own namespace's spans and nothing else (the operator's exporter gets
// them all); a span of no namespace goes to no endpoint; a changed
// endpoint is followed.
func TestNamespacesSendEachItsOwnSpans(t *testing.T) {
	a, b, c := newCollector(t), newCollector(t), newCollector(t)
	pool := x509.NewCertPool()
	pool.AddCert(a.srv.Certificate())
	out, err := outbound.New(outbound.Config{AllowPrivate: true, RootCAs: pool})
	require.NoError(t, err)
	defer out.Close()
	var mu sync.Mutex
	endpoints := map[string]string{"t1/default": a.srv.URL + "/v1/traces", "t2/default": b.srv.URL + "/v1/traces"}
	nss := NewNamespaces(out, func(ns string) Endpoint {
		mu.Lock()
		defer mu.Unlock()
		return Endpoint{URL: endpoints[ns]}
	})
	clock := time.Now()
	nss.now = func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		return clock
	}
	op := tracetest.NewInMemoryExporter()
	tr, err := FromEnv(context.Background(), Config{Exporter: op, Namespaces: nss})
	require.NoError(t, err)
	defer func() { require.NoError(t, tr.Shutdown(context.Background())) }()

	now := time.Now()
	tr.Send("t1/default", "", "", false, []Message{{ID: "j1", Queue: "q"}}, now, "")
	tr.Send("t2/default", "", "", false, []Message{{ID: "j2", Queue: "q"}}, now, "")
	tr.Send("t3/default", "", "", false, []Message{{ID: "j3", Queue: "q"}}, now, "") // names no endpoint
	tr.System("shard POST", 0, now, "", "", "", "t1/default").End("", 200, "")       // not shared
	require.NoError(t, tr.ForceFlush(context.Background()))
	require.Equal(t, []string{"send q /t1/default"}, a.names())
	require.Equal(t, []string{"send q /t2/default"}, b.names())
	require.Len(t, op.GetSpans(), 4, "the operator gets every span")

	mu.Lock()
	endpoints["t1/default"] = c.srv.URL + "/v1/traces"
	mu.Unlock()
	tr.Settle("t1/default", "ack", Message{ID: "j1", Queue: "q"}, "completed", now, "")
	require.NoError(t, tr.ForceFlush(context.Background()))
	require.Equal(t, []string{"send q /t1/default", "settle q /t1/default"}, a.names(), "within lookupEvery the old endpoint still holds")
	mu.Lock()
	clock = clock.Add(lookupEvery)
	mu.Unlock()
	tr.Settle("t1/default", "ack", Message{ID: "j1", Queue: "q"}, "completed", now, "")
	require.NoError(t, tr.ForceFlush(context.Background()))
	require.Equal(t, []string{"settle q /t1/default"}, c.names())
	require.Len(t, a.names(), 2, "the old endpoint gets nothing more")

	// A change made on this node is followed at once.
	mu.Lock()
	endpoints["t2/default"] = ""
	mu.Unlock()
	tr.NamespaceChanged("t2/default")
	tr.Send("t2/default", "", "", false, []Message{{ID: "j4", Queue: "q"}}, now, "")
	require.NoError(t, tr.ForceFlush(context.Background()))
	require.Len(t, b.names(), 1, "a removed endpoint gets nothing more")
}

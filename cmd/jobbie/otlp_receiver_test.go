package main

import (
	"compress/gzip"
	"encoding/hex"
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// otlpReceiver is a real OTLP/HTTP trace receiver: it decodes each POSTed
// protobuf ExportTraceServiceRequest and keeps its spans.
type otlpReceiver struct {
	srv *httptest.Server
	URL string // its traces URL

	mu      sync.Mutex
	spans   []gotSpan
	changed chan struct{} // closed and replaced on every export
}

// gotSpan is a span as received, with its resource's service.name.
type gotSpan struct {
	Service  string
	Resource map[string]string
	*tracepb.Span
}

func (s gotSpan) TraceID() string  { return hex.EncodeToString(s.GetTraceId()) }
func (s gotSpan) SpanID() string   { return hex.EncodeToString(s.GetSpanId()) }
func (s gotSpan) ParentID() string { return hex.EncodeToString(s.GetParentSpanId()) }

// Attr is the string form of attribute key ("" when absent).
func (s gotSpan) Attr(key string) string { return attrOf(s.GetAttributes(), key) }

// Int is the int attribute key (-1 when absent).
func (s gotSpan) Int(key string) int64 {
	for _, a := range s.GetAttributes() {
		if a.GetKey() == key {
			return a.GetValue().GetIntValue()
		}
	}
	return -1
}

// newOTLPReceiver starts a receiver, over TLS when tls is set (the
// httptest certificate, for 127.0.0.1), until the test ends.
func newOTLPReceiver(t *testing.T, tls bool) *otlpReceiver {
	t.Helper()
	r := &otlpReceiver{changed: make(chan struct{})}
	h := http.HandlerFunc(r.export)
	if tls {
		r.srv = httptest.NewTLSServer(h)
	} else {
		r.srv = httptest.NewServer(h)
	}
	t.Cleanup(r.srv.Close)
	r.URL = r.srv.URL + "/v1/traces"
	return r
}

// caFile writes the receiver's certificate as PEM, for --push-ca-file.
func (r *otlpReceiver) caFile(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "otlp-ca.crt")
	require.NoError(t, os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: r.srv.Certificate().Raw}), 0o600))
	return p
}

func (r *otlpReceiver) export(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodPost || req.URL.Path != "/v1/traces" || req.Header.Get("Content-Type") != "application/x-protobuf" {
		http.Error(w, "POST /v1/traces application/x-protobuf only", http.StatusBadRequest)
		return
	}
	var body io.Reader = req.Body
	if req.Header.Get("Content-Encoding") == "gzip" {
		gz, err := gzip.NewReader(req.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		body = gz
	}
	raw, err := io.ReadAll(body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var in coltracepb.ExportTraceServiceRequest
	if err := proto.Unmarshal(raw, &in); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	for _, rs := range in.GetResourceSpans() {
		res := map[string]string{}
		for _, a := range rs.GetResource().GetAttributes() {
			res[a.GetKey()] = a.GetValue().GetStringValue()
		}
		for _, ss := range rs.GetScopeSpans() {
			for _, sp := range ss.GetSpans() {
				r.spans = append(r.spans, gotSpan{Service: res["service.name"], Resource: res, Span: sp})
			}
		}
	}
	close(r.changed)
	r.changed = make(chan struct{})
	r.mu.Unlock()
	out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}

// Spans is what it has received so far.
func (r *otlpReceiver) Spans() []gotSpan {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]gotSpan(nil), r.spans...)
}

// waitFor waits, woken by each export, until find finds what it looks for
// in the spans received (generous bound: exports are batched).
func (r *otlpReceiver) waitFor(t *testing.T, what string, find func([]gotSpan) bool) []gotSpan {
	t.Helper()
	deadline := time.After(60 * time.Second)
	for {
		r.mu.Lock()
		spans, changed := append([]gotSpan(nil), r.spans...), r.changed
		r.mu.Unlock()
		if find(spans) {
			return spans
		}
		select {
		case <-changed:
		case <-deadline:
			t.Fatalf("the receiver never got %s; it has %d spans: %v", what, len(spans), names(spans))
		}
	}
}

// named returns the spans called name in trace (any trace when "").
func named(spans []gotSpan, name, trace string) []gotSpan {
	var out []gotSpan
	for _, s := range spans {
		if s.GetName() == name && (trace == "" || s.TraceID() == trace) {
			out = append(out, s)
		}
	}
	return out
}

func names(spans []gotSpan) []string {
	out := make([]string, len(spans))
	for i, s := range spans {
		out[i] = s.Service + ":" + s.GetName() + "@" + s.TraceID()
	}
	return out
}

func attrOf(attrs []*commonpb.KeyValue, key string) string {
	for _, a := range attrs {
		if a.GetKey() == key {
			v := a.GetValue()
			if s := v.GetStringValue(); s != "" {
				return s
			}
			if _, ok := v.GetValue().(*commonpb.AnyValue_IntValue); ok {
				return strconv.FormatInt(v.GetIntValue(), 10)
			}
		}
	}
	return ""
}

package connectapi

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"
	"google.golang.org/genproto/googleapis/rpc/errdetails"

	"github.com/jobbie/jobbie/proto/gen/externalscaler"
	"github.com/jobbie/jobbie/proto/gen/externalscaler/externalscalerconnect"
	"github.com/jobbie/jobbie/wire"
)

// scaleRoute is a fake of GET /api/v1/queues/{name}/scale: it gives its
// answers in turn (the last again once they run out) and keeps every
// request. The real route is tested against jobbie dev
// (cmd/jobbie/scaler_dev_test.go).
type scaleRoute struct {
	mu      sync.Mutex
	answers []Answer
	calls   []*Request
	ended   chan struct{} // a call's handler returned
}

func newScaleRoute(answers ...Answer) *scaleRoute {
	return &scaleRoute{answers: answers, ended: make(chan struct{}, 16)}
}

func (f *scaleRoute) serve(r *Request) Answer {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, r)
	a := f.answers[0]
	if len(f.answers) > 1 {
		f.answers = f.answers[1:]
	}
	return a
}

func (f *scaleRoute) requests() []*Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]*Request(nil), f.calls...)
}

// scaleAnswer is the route's answer for a queue with backlog pending and
// inFlight active jobs.
func scaleAnswer(backlog, inFlight int64) Answer {
	b, _ := json.Marshal(wire.QueueScale{Queue: "emails.send", Backlog: backlog, InFlight: inFlight, Demand: backlog + inFlight})
	return Answer{Status: http.StatusOK, RequestID: "req_1", Body: b}
}

func errorAnswer(status int, code wire.ErrorCode) Answer {
	b, _ := json.Marshal(wire.ErrorBody{Error: &wire.Error{Code: code, Message: string(code)}})
	return Answer{Status: status, Body: b}
}

// serveScaler serves the external scaler over f on an HTTP/2 server.
func serveScaler(t *testing.T, f *scaleRoute, work WorkConfig) externalscalerconnect.ExternalScalerClient {
	t.Helper()
	mux := http.NewServeMux()
	path, h := externalscalerconnect.NewExternalScalerHandler(New(f.serve, work, ScalerConfig{Poll: time.Millisecond}))
	mux.Handle(path, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r)
		select {
		case f.ended <- struct{}{}:
		default: // only TestScalerStreamEnds waits for one, of few calls
		}
	}))
	srv := httptest.NewUnstartedServer(mux)
	srv.EnableHTTP2 = true
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return externalscalerconnect.NewExternalScalerClient(srv.Client(), srv.URL, connect.WithGRPC())
}

func ref(md map[string]string) *externalscaler.ScaledObjectRef {
	return &externalscaler.ScaledObjectRef{Name: "workers", Namespace: "apps", ScalerMetadata: md}
}

// fieldOf is the field a Connect error's BadRequest detail names.
func fieldOf(t *testing.T, err error) string {
	t.Helper()
	var ce *connect.Error
	require.True(t, errors.As(err, &ce), "%v", err)
	require.Equal(t, connect.CodeInvalidArgument, ce.Code(), "%v", err)
	for _, d := range ce.Details() {
		if v, err := d.Value(); err == nil {
			if br, ok := v.(*errdetails.BadRequest); ok {
				return br.GetFieldViolations()[0].GetField()
			}
		}
	}
	t.Fatalf("no BadRequest detail in %v", err)
	return ""
}

// Bad metadata is InvalidArgument naming its key, on every method, and
// no request is made of it.
func TestScalerRefusesBadMetadata(t *testing.T) {
	t.Parallel()
	f := newScaleRoute(scaleAnswer(1, 0))
	c := serveScaler(t, f, WorkConfig{})
	ctx := context.Background()
	for _, tc := range []struct {
		md    map[string]string
		field string
	}{
		{map[string]string{"apiKey": "k"}, "queue"},
		{map[string]string{"queue": "a/b", "apiKey": "k"}, "queue"},
		{map[string]string{"queue": "q", "targetDemandPerReplica": "0"}, "targetDemandPerReplica"},
		{map[string]string{"queue": "q", "targetDemandPerReplica": "ten"}, "targetDemandPerReplica"},
		{map[string]string{"queue": "q", "targetDemandPerReplica": "+Inf"}, "targetDemandPerReplica"},
		{map[string]string{"queue": "q", "activationDemand": "-1"}, "activationDemand"},
		{map[string]string{"queue": "q", "activationDemand": "NaN"}, "activationDemand"},
		{map[string]string{"queue": "q", "apiKey": "k", "apiKeyFromEnv": "k"}, "apiKey"},
		{map[string]string{"queue": "q", "namespace": ""}, "namespace"},
		{map[string]string{"queue": "q", "targetPendingPerReplica": "5"}, "targetPendingPerReplica"},
	} {
		_, err := c.IsActive(ctx, connect.NewRequest(ref(tc.md)))
		require.Equal(t, tc.field, fieldOf(t, err), "%v", tc.md)
		_, err = c.GetMetricSpec(ctx, connect.NewRequest(ref(tc.md)))
		require.Equal(t, tc.field, fieldOf(t, err), "%v", tc.md)
		_, err = c.GetMetrics(ctx, connect.NewRequest(&externalscaler.GetMetricsRequest{ScaledObjectRef: ref(tc.md)}))
		require.Equal(t, tc.field, fieldOf(t, err), "%v", tc.md)
		s, err := c.StreamIsActive(ctx, connect.NewRequest(ref(tc.md)))
		require.NoError(t, err)
		require.False(t, s.Receive())
		require.Equal(t, tc.field, fieldOf(t, s.Err()), "%v", tc.md)
	}
	_, err := c.GetMetrics(ctx, connect.NewRequest(&externalscaler.GetMetricsRequest{}))
	require.Equal(t, "scaledObjectRef", fieldOf(t, err))
	_, err = c.GetMetrics(ctx, connect.NewRequest(&externalscaler.GetMetricsRequest{ScaledObjectRef: ref(map[string]string{"queue": "q"}), MetricName: "jobbie-other"}))
	require.Equal(t, "metricName", fieldOf(t, err))

	// The key twice, or the namespace twice: metadata and header.
	req := connect.NewRequest(ref(map[string]string{"queue": "q", "apiKey": "k"}))
	req.Header().Set("Authorization", "Bearer k")
	_, err = c.IsActive(ctx, req)
	require.Equal(t, "apiKey", fieldOf(t, err))
	req = connect.NewRequest(ref(map[string]string{"queue": "q", "namespace": "prod"}))
	req.Header().Set(wire.NamespaceHeader, "prod")
	_, err = c.IsActive(ctx, req)
	require.Equal(t, "namespace", fieldOf(t, err))

	require.Empty(t, f.requests(), "bad metadata made no request")
}

// Each method is GET /api/v1/queues/{name}/scale with the metadata's key
// and namespace (or the call's authorization header), and nothing else
// of the metadata; its answer becomes KEDA's.
func TestScalerAsksTheScaleRoute(t *testing.T) {
	t.Parallel()
	f := newScaleRoute(scaleAnswer(4, 2))
	c := serveScaler(t, f, WorkConfig{})
	ctx := context.Background()
	md := map[string]string{"scalerAddress": "jobbie-gateway:9090", "enableTLS": "true", "queue": "emails.send",
		"namespace": "prod", "apiKeyFromEnv": "k1", "targetDemandPerReplica": "2.5"}

	active, err := c.IsActive(ctx, connect.NewRequest(ref(md)))
	require.NoError(t, err)
	require.True(t, active.Msg.GetResult())
	require.Equal(t, "req_1", active.Header().Get(wire.RequestIDHeader))
	spec, err := c.GetMetricSpec(ctx, connect.NewRequest(ref(md)))
	require.NoError(t, err)
	require.Len(t, spec.Msg.GetMetricSpecs(), 1)
	require.Equal(t, "jobbie-emails-send", spec.Msg.GetMetricSpecs()[0].GetMetricName())
	require.Equal(t, 2.5, spec.Msg.GetMetricSpecs()[0].GetTargetSizeFloat())
	require.Equal(t, int64(3), spec.Msg.GetMetricSpecs()[0].GetTargetSize())
	m, err := c.GetMetrics(ctx, connect.NewRequest(&externalscaler.GetMetricsRequest{ScaledObjectRef: ref(md), MetricName: "jobbie-emails-send"}))
	require.NoError(t, err)
	require.Len(t, m.Msg.GetMetricValues(), 1)
	require.Equal(t, "jobbie-emails-send", m.Msg.GetMetricValues()[0].GetMetricName())
	require.Equal(t, int64(6), m.Msg.GetMetricValues()[0].GetMetricValue())
	require.Equal(t, 6.0, m.Msg.GetMetricValues()[0].GetMetricValueFloat())

	calls := f.requests()
	require.Len(t, calls, 3)
	for _, r := range calls {
		require.Equal(t, http.MethodGet, r.Method)
		require.Equal(t, "/api/v1/queues/emails.send/scale", r.Path)
		require.Nil(t, r.Body)
		require.Equal(t, http.Header{"Authorization": {"Bearer k1"}, wire.NamespaceHeader: {"prod"}}, r.Header)
	}

	// The authorization header, for clients other than KEDA.
	req := connect.NewRequest(ref(map[string]string{"queue": "emails.send", "apiKey": ""}))
	req.Header().Set("Authorization", "Bearer k2")
	_, err = c.IsActive(ctx, req)
	require.NoError(t, err)
	require.Equal(t, http.Header{"Authorization": {"Bearer k2"}}, f.requests()[3].Header)
}

// Active: demand above activationDemand (default 0), and always while a
// job is in flight, whatever the threshold.
func TestScalerActivity(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		backlog, inFlight int64
		activation        string
		want              bool
	}{
		{0, 0, "", false},
		{1, 0, "", true},
		{0, 1, "", true},
		{3, 0, "3", false},
		{4, 0, "3", true},
		{0, 1, "10", true},
		{2, 0, "1.5", true},
	} {
		c := serveScaler(t, newScaleRoute(scaleAnswer(tc.backlog, tc.inFlight)), WorkConfig{})
		md := map[string]string{"queue": "q"}
		if tc.activation != "" {
			md["activationDemand"] = tc.activation
		}
		res, err := c.IsActive(context.Background(), connect.NewRequest(ref(md)))
		require.NoError(t, err)
		require.Equal(t, tc.want, res.Msg.GetResult(), "%+v", tc)
	}
}

// A refusal of the route is the call's, by the one table: another
// tenant's queue is NotFound, no key Unauthenticated.
func TestScalerPassesRefusals(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for status, code := range map[int]connect.Code{http.StatusNotFound: connect.CodeNotFound,
		http.StatusUnauthorized: connect.CodeUnauthenticated, http.StatusForbidden: connect.CodePermissionDenied} {
		c := serveScaler(t, newScaleRoute(errorAnswer(status, "refused")), WorkConfig{})
		_, err := c.IsActive(ctx, connect.NewRequest(ref(map[string]string{"queue": "q"})))
		require.Equal(t, code, connect.CodeOf(err), "%v", err)
		_, err = c.GetMetricSpec(ctx, connect.NewRequest(ref(map[string]string{"queue": "q"})))
		require.Equal(t, code, connect.CodeOf(err), "%v", err)
		_, err = c.GetMetrics(ctx, connect.NewRequest(&externalscaler.GetMetricsRequest{ScaledObjectRef: ref(map[string]string{"queue": "q"})}))
		require.Equal(t, code, connect.CodeOf(err), "%v", err)
	}
}

// StreamIsActive sends the state when it opens and each flip, reads
// again after a busy shard, and ends with the route's refusal.
func TestScalerStreamSendsFlips(t *testing.T) {
	t.Parallel()
	f := newScaleRoute(scaleAnswer(0, 0), scaleAnswer(0, 0), scaleAnswer(2, 0), scaleAnswer(1, 1),
		errorAnswer(http.StatusServiceUnavailable, wire.CodeNoLeader), scaleAnswer(0, 1), scaleAnswer(0, 0),
		scaleAnswer(0, 0), errorAnswer(http.StatusUnauthorized, wire.CodeUnauthenticated))
	c := serveScaler(t, f, WorkConfig{})
	s, err := c.StreamIsActive(context.Background(), connect.NewRequest(ref(map[string]string{"queue": "q"})))
	require.NoError(t, err)
	var got []bool
	for s.Receive() {
		got = append(got, s.Msg().GetResult())
	}
	require.Equal(t, []bool{false, true, false}, got)
	require.Equal(t, connect.CodeUnauthenticated, connect.CodeOf(s.Err()), "%v", s.Err())
	require.Len(t, f.requests(), 9, "every answer was read, the 503 too")
}

// A stream stops reading when its caller closes it, and ends
// Unavailable when the gateway stops.
func TestScalerStreamEnds(t *testing.T) {
	t.Parallel()
	f := newScaleRoute(scaleAnswer(1, 0))
	stopping, stop := context.WithCancel(context.Background())
	c := serveScaler(t, f, WorkConfig{Stopping: stopping})

	ctx, cancel := context.WithCancel(context.Background())
	s, err := c.StreamIsActive(ctx, connect.NewRequest(ref(map[string]string{"queue": "q"})))
	require.NoError(t, err)
	require.True(t, s.Receive())
	require.True(t, s.Msg().GetResult())
	cancel()
	select {
	case <-f.ended:
	case <-time.After(30 * time.Second):
		t.Fatal("the stream's handler did not return when its caller closed it")
	}

	s, err = c.StreamIsActive(context.Background(), connect.NewRequest(ref(map[string]string{"queue": "q"})))
	require.NoError(t, err)
	require.True(t, s.Receive())
	stop()
	for s.Receive() {
		t.Fatal("no flip was due")
	}
	require.Equal(t, connect.CodeUnavailable, connect.CodeOf(s.Err()), "%v", s.Err())
}

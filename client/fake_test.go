package client_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/wire"
	"github.com/stretchr/testify/require"
)

// fakeServer speaks just enough of the worker protocol for the worker
// runtime's unit tests: an in-memory queue, long-poll fetch, and channels
// that signal every ack, fail and heartbeat.
type fakeServer struct {
	srv     *httptest.Server
	pending chan fakeJob

	acks       chan ackCall
	fails      chan failCall
	heartbeats chan map[string]wire.HeartbeatEntry

	mu          sync.Mutex
	cancelled   map[string]string // job id → heartbeat status to answer
	fetchStatus int               // when set, fetch answers this error status
	grpcURL     string            // GET /api/v1/info's; unset, that route is not served
}

type fakeJob struct {
	ID                      string
	Payload                 json.RawMessage
	Checkpoint              json.RawMessage
	Lease                   float64 // seconds; 0 for 60
	TraceParent, TraceState string
}

type ackCall struct {
	ID         string
	Result     json.RawMessage
	LeaseToken string
}

type failCall struct {
	ID           string
	Error        string
	Backtrace    string
	LeaseToken   string
	NonRetryable bool
}

// fakeLeaseToken is the token the fake hands out with job id.
func fakeLeaseToken(id string) string { return "lease-of-" + id }

func newFakeServer(t *testing.T) *fakeServer {
	t.Helper()
	f := &fakeServer{
		pending:    make(chan fakeJob, 1000),
		acks:       make(chan ackCall, 1000),
		fails:      make(chan failCall, 1000),
		heartbeats: make(chan map[string]wire.HeartbeatEntry, 1000),
		cancelled:  map[string]string{},
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/v1/fetch", f.fetch)
	mux.HandleFunc("POST /api/v1/ack/{id}", f.ack)
	mux.HandleFunc("POST /api/v1/fail/{id}", f.fail)
	mux.HandleFunc("POST /api/v1/heartbeat", f.heartbeat)
	mux.HandleFunc("GET /api/v1/info", f.info)
	f.srv = httptest.NewServer(mux)
	t.Cleanup(f.srv.Close)
	return f
}

// client returns a client of the fake that closes its connections when
// the test ends.
func (f *fakeServer) client(t *testing.T) *client.Client {
	c := client.New(f.srv.URL, "key")
	t.Cleanup(c.CloseIdleConnections)
	return c
}

func (f *fakeServer) add(id, payload string) {
	f.pending <- fakeJob{ID: id, Payload: json.RawMessage(payload)}
}

// stop makes heartbeats answer status ("cancel" or "lost") for job id.
func (f *fakeServer) stop(id, status string) {
	f.mu.Lock()
	f.cancelled[id] = status
	f.mu.Unlock()
}

// info answers the gRPC URL set with grpcAt, else 404 as a gateway
// without the route would.
func (f *fakeServer) info(w http.ResponseWriter, _ *http.Request) {
	f.mu.Lock()
	u := f.grpcURL
	f.mu.Unlock()
	if u == "" {
		writeErr(w, http.StatusNotFound, wire.CodeNotFound, "no such route")
		return
	}
	writeJSON(w, http.StatusOK, wire.GatewayInfo{GRPCURL: u})
}

func (f *fakeServer) grpcAt(u string) {
	f.mu.Lock()
	f.grpcURL = u
	f.mu.Unlock()
}

func (f *fakeServer) refuseFetch(status int) {
	f.mu.Lock()
	f.fetchStatus = status
	f.mu.Unlock()
}

func (f *fakeServer) fetch(w http.ResponseWriter, r *http.Request) {
	var req wire.FetchRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.Queues) == 0 {
		writeErr(w, http.StatusBadRequest, wire.CodeBadRequest, "bad fetch")
		return
	}
	f.mu.Lock()
	status := f.fetchStatus
	f.mu.Unlock()
	if status != 0 {
		writeErr(w, status, wire.CodeUnauthenticated, "refused")
		return
	}
	var wait time.Duration
	if req.Timeout != nil {
		wait = time.Duration(*req.Timeout * float64(time.Second))
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case j := <-f.pending:
		lease := j.Lease
		if lease == 0 {
			lease = 60
		}
		writeJSON(w, http.StatusOK, wire.FetchedJob{
			JobID: j.ID, Queue: req.Queues[0], Payload: j.Payload, Attempt: 1, MaxRetries: 3,
			LeaseDuration: lease, Checkpoint: j.Checkpoint, Tags: map[string]string{"k": "v"}, LeaseToken: fakeLeaseToken(j.ID),
			TraceParent: j.TraceParent, TraceState: j.TraceState,
		})
	case <-timer.C:
		w.WriteHeader(http.StatusNoContent)
	case <-r.Context().Done():
	}
}

func (f *fakeServer) ack(w http.ResponseWriter, r *http.Request) {
	var body wire.AckRequest
	_ = json.NewDecoder(r.Body).Decode(&body)
	f.acks <- ackCall{ID: r.PathValue("id"), Result: body.Result, LeaseToken: body.LeaseToken}
	writeJSON(w, http.StatusOK, wire.StatusResponse{Status: wire.StateCompleted})
}

func (f *fakeServer) fail(w http.ResponseWriter, r *http.Request) {
	var body wire.FailRequest
	_ = json.NewDecoder(r.Body).Decode(&body)
	f.fails <- failCall{ID: r.PathValue("id"), Error: body.Error, Backtrace: body.Backtrace, LeaseToken: body.LeaseToken, NonRetryable: body.NonRetryable}
	writeJSON(w, http.StatusOK, wire.FailResponse{Status: wire.StateRetrying, AttemptsRemaining: 2})
}

func (f *fakeServer) heartbeat(w http.ResponseWriter, r *http.Request) {
	var body wire.HeartbeatRequest
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		writeErr(w, http.StatusBadRequest, wire.CodeInvalidJSON, err.Error())
		return
	}
	out := wire.HeartbeatResponse{Jobs: map[string]wire.StatusResponse{}}
	f.mu.Lock()
	for id := range body.Jobs {
		status := wire.HeartbeatOK
		if s, ok := f.cancelled[id]; ok {
			status = s
		}
		out.Jobs[id] = wire.StatusResponse{Status: status}
	}
	f.mu.Unlock()
	f.heartbeats <- body.Jobs
	writeJSON(w, http.StatusOK, out)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeErr(w http.ResponseWriter, status int, code wire.ErrorCode, msg string) {
	writeJSON(w, status, wire.ErrorBody{Error: &wire.Error{Code: code, Message: msg, RequestID: "req_test"}})
}

// recv waits for one value from ch, failing the test after a while.
func recv[T any](t *testing.T, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		t.Fatalf("timed out waiting for a %T", *new(T))
		panic("unreachable")
	}
}

// recorder is an httptest server that records the last request and
// answers with a canned response.
type recorder struct {
	srv    *httptest.Server
	mu     sync.Mutex
	method string
	path   string
	header http.Header
	body   string

	status  int
	headers map[string]string
	reply   string
}

func newRecorder(t *testing.T, status int, reply string) *recorder {
	t.Helper()
	r := &recorder{status: status, reply: reply, headers: map[string]string{}}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *recorder) serve(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	r.method, r.path, r.header, r.body = req.Method, req.URL.EscapedPath(), req.Header.Clone(), string(body)
	status, reply, headers := r.status, r.reply, r.headers
	r.mu.Unlock()
	for k, v := range headers {
		w.Header().Set(k, v)
	}
	if reply != "" {
		w.Header().Set("Content-Type", "application/json")
	}
	w.WriteHeader(status)
	_, _ = w.Write([]byte(reply))
}

func (r *recorder) client(t *testing.T, opts ...client.Option) *client.Client {
	c := client.New(r.srv.URL+"/", "k3y", opts...)
	t.Cleanup(c.CloseIdleConnections)
	return c
}

// respond changes the canned response.
func (r *recorder) respond(status int, reply string) {
	r.mu.Lock()
	r.status, r.reply = status, reply
	r.mu.Unlock()
}

// setHeader adds a response header.
func (r *recorder) setHeader(k, v string) {
	r.mu.Lock()
	r.headers[k] = v
	r.mu.Unlock()
}

// requestHeader is a header of the last request.
func (r *recorder) requestHeader(k string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.header.Get(k)
}

// requireRequest checks the last request's method, path and JSON body.
func (r *recorder) requireRequest(t *testing.T, method, path, body string) {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	require.Equal(t, method, r.method)
	require.Equal(t, path, r.path)
	if body == "" {
		require.Empty(t, r.body)
		return
	}
	require.JSONEq(t, body, r.body)
	require.Equal(t, "application/json", r.header.Get("Content-Type"))
}

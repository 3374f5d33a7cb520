package connectapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"

	jobbiev1 "github.com/jobbie/jobbie/proto/gen/jobbie/v1"
	"github.com/jobbie/jobbie/proto/gen/jobbie/v1/jobbiev1connect"
	"github.com/jobbie/jobbie/wire"
)

// workerRoute is a fake of the route table's worker routes: the jobs it
// has to lease, and every request it was sent. The real routes are
// tested against jobbie dev (cmd/jobbie/worker_stream_*_test.go).
type workerRoute struct {
	mu    sync.Mutex
	jobs  []wire.FetchedJob
	calls []*Request
	ended chan struct{} // a stream's handler returned
	drain bool          // the worker was drained: fetches and heartbeats say so
	// cancels are told by the next fetch; a fetch with max 0 waits on
	// watch (when set) for them, or returns after a short wait.
	cancels []wire.JobCancel
	watch   chan struct{}
	failed  chan string // each fail's job id, when set
}

func newWorkerRoute(jobs int) *workerRoute {
	return &workerRoute{jobs: leasable(jobs), ended: make(chan struct{}, 16)}
}

func (f *workerRoute) serve(r *Request) Answer {
	f.mu.Lock()
	f.calls = append(f.calls, r)
	f.mu.Unlock()
	switch r.Path {
	case "/api/v1/fetch/batch":
		var req wire.FetchBatchRequest
		if err := json.Unmarshal(r.Body, &req); err != nil {
			return Answer{Status: http.StatusBadRequest}
		}
		f.mu.Lock()
		if f.drain {
			f.mu.Unlock()
			return Answer{Status: http.StatusOK, Drain: true, Body: []byte(`{"jobs":[]}`)}
		}
		n := min(*req.Max, len(f.jobs))
		out := wire.FetchBatchResponse{Jobs: f.jobs[:n], Cancels: f.cancels}
		f.jobs, f.cancels = f.jobs[n:], nil
		watch := f.watch
		f.mu.Unlock()
		if n == 0 && len(out.Cancels) == 0 {
			if *req.Max == 0 && watch != nil {
				<-watch // parked until the test lets it go
			} else {
				time.Sleep(20 * time.Millisecond) // a short long-poll
			}
		}
		b, _ := json.Marshal(out)
		return Answer{Status: http.StatusOK, Body: b}
	case "/api/v1/ack/batch":
		var req wire.AckBatchRequest
		_ = json.Unmarshal(r.Body, &req)
		var out wire.AckBatchResponse
		for _, a := range req.Acks {
			out.Results = append(out.Results, wire.AckBatchResult{JobID: a.JobID, Status: wire.StateCompleted})
		}
		b, _ := json.Marshal(out)
		return Answer{Status: http.StatusOK, Body: b}
	case "/api/v1/heartbeat":
		var req wire.HeartbeatRequest
		_ = json.Unmarshal(r.Body, &req)
		f.mu.Lock()
		out := wire.HeartbeatResponse{Jobs: map[string]wire.StatusResponse{}, Drain: f.drain}
		f.mu.Unlock()
		for id := range req.Jobs {
			out.Jobs[id] = wire.StatusResponse{Status: wire.HeartbeatOK}
		}
		b, _ := json.Marshal(out)
		return Answer{Status: http.StatusOK, Body: b}
	case "/api/v1/release":
		return Answer{Status: http.StatusOK, Body: []byte(`{"released":[]}`)}
	}
	if id, ok := strings.CutPrefix(r.Path, "/api/v1/fail/"); ok && f.failed != nil {
		f.failed <- id
		return Answer{Status: http.StatusOK, Body: []byte(`{"status":"dead","reason":"non_retryable"}`)}
	}
	return Answer{Status: http.StatusNotFound, Body: []byte(`{"error":{"code":"not_found","message":"no route"}}`)}
}

// jobFetches are the fetch/batch requests that asked for jobs (max > 0).
func (f *workerRoute) jobFetches(t *testing.T) []wire.FetchBatchRequest {
	t.Helper()
	var out []wire.FetchBatchRequest
	for _, b := range f.requests("/api/v1/fetch/batch") {
		var r wire.FetchBatchRequest
		require.NoError(t, json.Unmarshal(b, &r))
		if *r.Max > 0 {
			out = append(out, r)
		}
	}
	return out
}

// requests are the bodies of the requests sent to path.
func (f *workerRoute) requests(path string) [][]byte {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out [][]byte
	for _, r := range f.calls {
		if r.Path == path {
			out = append(out, r.Body)
		}
	}
	return out
}

// serveWork serves the worker stream over f on an HTTP/2 server.
func serveWork(t *testing.T, f *workerRoute, cfg WorkConfig) jobbiev1connect.WorkerServiceClient {
	t.Helper()
	hc, url := serveWorkAt(t, f, cfg)
	return jobbiev1connect.NewWorkerServiceClient(hc, url, connect.WithGRPC())
}

// serveWorkAt serves the worker stream over f on an HTTP/2 server, and
// returns a client of it and its URL.
func serveWorkAt(t *testing.T, f *workerRoute, cfg WorkConfig) (*http.Client, string) {
	t.Helper()
	mux := http.NewServeMux()
	for p, h := range New(f.serve, cfg, ScalerConfig{}).Handlers(1 << 20) {
		mux.Handle(p, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			h.ServeHTTP(w, r)
			f.ended <- struct{}{}
		}))
	}
	srv := httptest.NewUnstartedServer(mux)
	srv.EnableHTTP2 = true
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv.Client(), srv.URL
}

func leasable(n int) []wire.FetchedJob {
	out := make([]wire.FetchedJob, n)
	for i := range out {
		out[i] = wire.FetchedJob{JobID: fmt.Sprintf("job_%d", i), Queue: "q", Payload: json.RawMessage(`{}`), Attempt: 1,
			LeaseToken: fmt.Sprintf("tok%d", i), Checkpoint: json.RawMessage("null")}
	}
	return out
}

// recv reads frames until one satisfies keep.
func recv(t *testing.T, bidi *connect.BidiStreamForClient[jobbiev1.WorkRequest, jobbiev1.WorkResponse], keep func(*jobbiev1.WorkResponse) bool) *jobbiev1.WorkResponse {
	t.Helper()
	for {
		f, err := bidi.Receive()
		require.NoError(t, err)
		if keep(f) {
			return f
		}
	}
}

// Credit bounds the jobs sent, and each fetch asks for the credit left;
// one frame's acks go out as one ack/batch, answered in one frame; the
// jobs still held when the worker closes its side are released, with
// their attempt and lease token.
func TestWorkStreamCreditBatchesAndRelease(t *testing.T) {
	t.Parallel()
	f := newWorkerRoute(5)
	bidi := serveWork(t, f, WorkConfig{}).Work(context.Background())
	bidi.RequestHeader().Set("Authorization", "Bearer k")
	require.NoError(t, bidi.Send(&jobbiev1.WorkRequest{Hello: &jobbiev1.Hello{WorkerId: "w1", Queues: []string{"q"}, LeaseDuration: "90s"},
		Credit: &jobbiev1.Credit{N: 3}}))
	jobs := recv(t, bidi, func(r *jobbiev1.WorkResponse) bool { return len(r.GetJobs()) > 0 }).GetJobs()
	require.Len(t, jobs, 3)
	first := f.jobFetches(t)[0]
	require.Equal(t, 3, *first.Max, "a fetch asks for the credit")
	require.Equal(t, "w1", first.WorkerID)
	require.Equal(t, 90.0, *first.LeaseDuration)
	f.mu.Lock()
	require.Equal(t, "Bearer k", f.calls[0].Header.Get("Authorization"), "the stream's key goes with each request")
	f.mu.Unlock()

	require.NoError(t, bidi.Send(&jobbiev1.WorkRequest{Credit: &jobbiev1.Credit{N: 1}, Acks: []*jobbiev1.Ack{
		{CorrelationId: 1, JobId: jobs[0].GetJobId(), LeaseToken: jobs[0].GetLeaseToken()},
		{CorrelationId: 2, JobId: jobs[1].GetJobId(), LeaseToken: jobs[1].GetLeaseToken()}}}))
	var results []*jobbiev1.Result
	var more []*jobbiev1.LeasedJob
	for len(results) == 0 || len(more) == 0 {
		r := recv(t, bidi, func(*jobbiev1.WorkResponse) bool { return true })
		if len(r.GetResults()) > 0 {
			require.Empty(t, results, "one frame's results come in one frame")
			results = r.GetResults()
		}
		more = append(more, r.GetJobs()...)
	}
	require.Len(t, results, 2)
	require.Len(t, f.requests("/api/v1/ack/batch"), 1, "one ack/batch for the frame")
	require.Len(t, more, 1, "one more credit, one more job")
	fetches := f.jobFetches(t)
	require.Equal(t, 1, *fetches[len(fetches)-1].Max)

	// Held now: jobs[2] and the one more. A clean close releases both.
	require.NoError(t, bidi.CloseRequest())
	_, err := bidi.Receive()
	require.True(t, errors.Is(err, io.EOF), "%v", err)
	rel := f.requests("/api/v1/release")
	require.Len(t, rel, 1)
	var got wire.ReleaseRequest
	require.NoError(t, json.Unmarshal(rel[0], &got))
	require.Equal(t, "w1", got.WorkerID)
	require.ElementsMatch(t, []wire.ReleaseEntry{
		{JobID: jobs[2].GetJobId(), Attempt: 1, LeaseToken: jobs[2].GetLeaseToken()},
		{JobID: more[0].GetJobId(), Attempt: 1, LeaseToken: more[0].GetLeaseToken()}}, got.Jobs)
}

// A stream that breaks releases nothing (the worker may still run its
// jobs); one that the gateway drains is told so, and fetches no more.
func TestWorkStreamBreakAndDrain(t *testing.T) {
	t.Parallel()
	f := newWorkerRoute(2)
	ctx, cancel := context.WithCancel(context.Background())
	bidi := serveWork(t, f, WorkConfig{}).Work(ctx)
	require.NoError(t, bidi.Send(&jobbiev1.WorkRequest{Hello: &jobbiev1.Hello{WorkerId: "w1", Queues: []string{"q"}}, Credit: &jobbiev1.Credit{N: 1}}))
	recv(t, bidi, func(r *jobbiev1.WorkResponse) bool { return len(r.GetJobs()) > 0 })
	cancel()
	_ = bidi.CloseResponse() // the worker drops the stream: reset
	select {
	case <-f.ended:
	case <-time.After(time.Minute):
		t.Fatal("the stream's handler did not return")
	}
	require.Empty(t, f.requests("/api/v1/release"), "a broken stream's jobs run to lease expiry")

	stopping, stop := context.WithCancel(context.Background())
	f = newWorkerRoute(0)
	bidi = serveWork(t, f, WorkConfig{Stopping: stopping, DrainWithin: time.Minute}).Work(context.Background())
	require.NoError(t, bidi.Send(&jobbiev1.WorkRequest{Hello: &jobbiev1.Hello{WorkerId: "w1", Queues: []string{"q"}}, Credit: &jobbiev1.Credit{N: 5}}))
	require.Eventually(t, func() bool { return len(f.requests("/api/v1/fetch/batch")) > 0 }, time.Minute, 10*time.Millisecond)
	stop()
	d := recv(t, bidi, func(r *jobbiev1.WorkResponse) bool { return r.GetDrain() != nil }).GetDrain()
	require.Equal(t, "1m0s", d.GetDeadline())
	require.NoError(t, bidi.CloseRequest())
	_, err := bidi.Receive()
	require.True(t, errors.Is(err, io.EOF), "%v", err)
}

// A job whose payload no Value can hold fails alone, for good, with the
// reason: the stream goes on and the worker gets the rest. Before, the
// fetch's whole answer ended the stream, its jobs were released and
// leased again to the next stream, which it ended too.
func TestWorkStreamFailsAJobAValueCannotHold(t *testing.T) {
	t.Parallel()
	f := newWorkerRoute(3)
	f.jobs[1].Payload = json.RawMessage(`{"amount":1e999}`)
	f.failed = make(chan string, 1)
	bidi := serveWork(t, f, WorkConfig{}).Work(context.Background())
	require.NoError(t, bidi.Send(&jobbiev1.WorkRequest{Hello: &jobbiev1.Hello{WorkerId: "w1", Queues: []string{"q"}}, Credit: &jobbiev1.Credit{N: 3}}))
	var got []string
	for len(got) < 2 {
		for _, j := range recv(t, bidi, func(r *jobbiev1.WorkResponse) bool { return len(r.GetJobs()) > 0 }).GetJobs() {
			got = append(got, j.GetJobId())
		}
	}
	require.Equal(t, []string{"job_0", "job_2"}, got)
	require.Equal(t, "job_1", <-f.failed)
	fails := f.requests("/api/v1/fail/job_1")
	require.Len(t, fails, 1, "the job no frame can carry is failed")
	var req wire.FailRequest
	require.NoError(t, json.Unmarshal(fails[0], &req))
	require.True(t, req.NonRetryable, "every attempt would fail alike")
	require.Equal(t, "w1", req.WorkerID)
	require.Equal(t, "tok1", req.LeaseToken)
	require.Contains(t, req.Error, "payload")
	require.Contains(t, req.Error, "json_payloads")

	// The stream still serves: an ack is answered.
	require.NoError(t, bidi.Send(&jobbiev1.WorkRequest{Acks: []*jobbiev1.Ack{{CorrelationId: 7, JobId: "job_0", LeaseToken: "tok0"}}}))
	res := recv(t, bidi, func(r *jobbiev1.WorkResponse) bool { return len(r.GetResults()) > 0 }).GetResults()
	require.Equal(t, uint64(7), res[0].GetCorrelationId())
	require.NoError(t, bidi.CloseRequest())
}

// A worker that asks for JSON payloads gets each job's payload and
// checkpoint as the shard stored them, and no Values.
func TestWorkStreamJSONPayloads(t *testing.T) {
	t.Parallel()
	f := newWorkerRoute(2)
	f.jobs[0].Payload = json.RawMessage(`{"b":1e999,"a":[1.50]}`)
	f.jobs[1].Checkpoint = json.RawMessage(`{"step":3}`)
	bidi := serveWork(t, f, WorkConfig{}).Work(context.Background())
	require.NoError(t, bidi.Send(&jobbiev1.WorkRequest{Hello: &jobbiev1.Hello{WorkerId: "w1", Queues: []string{"q"}, JsonPayloads: true},
		Credit: &jobbiev1.Credit{N: 2}}))
	var jobs []*jobbiev1.LeasedJob
	for len(jobs) < 2 {
		jobs = append(jobs, recv(t, bidi, func(r *jobbiev1.WorkResponse) bool { return len(r.GetJobs()) > 0 }).GetJobs()...)
	}
	require.Equal(t, `{"b":1e999,"a":[1.50]}`, string(jobs[0].GetPayloadJson()))
	require.Empty(t, jobs[0].GetCheckpointJson(), "a null checkpoint is none")
	require.Equal(t, `{}`, string(jobs[1].GetPayloadJson()))
	require.Equal(t, `{"step":3}`, string(jobs[1].GetCheckpointJson()))
	for _, j := range jobs {
		require.Nil(t, j.GetPayload())
		require.Nil(t, j.GetCheckpoint())
	}
	require.Empty(t, f.requests("/api/v1/fail/job_0"))
	require.NoError(t, bidi.CloseRequest())
}

// The reason a job is failed with fits a fail (wire.MaxErrorBytes) however
// long the number no Value holds: a payload may be a megabyte of digits,
// and a fail the shard refuses as too large left the job leased until its
// lease ran out, to come back to the stream and be refused again.
func TestWorkStreamFailsAJobWhoseNumberIsLong(t *testing.T) {
	t.Parallel()
	f := newWorkerRoute(1)
	f.jobs[0].Payload = json.RawMessage(`{"amount":1` + strings.Repeat("0", wire.MaxErrorBytes) + `}`)
	f.failed = make(chan string, 1)
	bidi := serveWork(t, f, WorkConfig{}).Work(context.Background())
	require.NoError(t, bidi.Send(&jobbiev1.WorkRequest{Hello: &jobbiev1.Hello{WorkerId: "w1", Queues: []string{"q"}}, Credit: &jobbiev1.Credit{N: 1}}))
	require.Equal(t, "job_0", <-f.failed)
	require.NoError(t, bidi.CloseRequest())
	var req wire.FailRequest
	require.NoError(t, json.Unmarshal(f.requests("/api/v1/fail/job_0")[0], &req))
	require.LessOrEqual(t, len(req.Error)+len(req.Backtrace), wire.MaxErrorBytes, "a fail the shard takes")
	require.Contains(t, req.Error, "payload")
	require.Contains(t, req.Error, "range")
}

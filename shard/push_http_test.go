package shard

import (
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	sdk "github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/wire"
)

// receiver is a push handler on 127.0.0.1 over TLS: it verifies every
// request's signature with the SDK's verifier, counts the calls in
// flight, and answers by its handle.
type receiver struct {
	srv      *httptest.Server
	keys     atomic.Value // []string: the namespace's public keys
	handle   func(w http.ResponseWriter, d wire.PushDelivery, n int)
	calls    atomic.Int64
	bad      atomic.Int64 // requests that did not verify
	inFlight atomic.Int64
	maxSeen  atomic.Int64
	mu       sync.Mutex
	traces   sync.Map // "<job id>/<attempt>" → [2]string: the request's traceparent and tracestate headers
}

func newReceiver(t *testing.T, handle func(w http.ResponseWriter, d wire.PushDelivery, n int)) *receiver {
	r := &receiver{handle: handle}
	r.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		now := r.inFlight.Add(1)
		defer r.inFlight.Add(-1)
		for m := r.maxSeen.Load(); now > m && !r.maxSeen.CompareAndSwap(m, now); m = r.maxSeen.Load() {
		}
		body, _ := io.ReadAll(req.Body)
		keys, _ := r.keys.Load().([]string)
		if err := sdk.VerifyWebhook(req.Header, body, keys, 5*time.Minute); err != nil {
			r.bad.Add(1)
			http.Error(w, err.Error(), 401)
			return
		}
		var d wire.PushDelivery
		require.NoError(t, json.Unmarshal(body, &d))
		r.traces.Store(fmt.Sprintf("%s/%d", d.JobID, d.Attempt),
			[2]string{req.Header.Get(wire.TraceParentHeader), req.Header.Get(wire.TraceStateHeader)})
		r.handle(w, d, int(r.calls.Add(1)))
	}))
	t.Cleanup(r.srv.Close)
	return r
}

// pushNode is a node that trusts rcv's certificate and may call loopback.
func pushNode(t *testing.T, rcv *receiver) *bundle {
	pool := x509.NewCertPool()
	pool.AddCert(rcv.srv.Certificate())
	b := setup(t, func(c *Config) { c.PushAllowPrivate, c.PushRootCAs = true, pool })
	r := b.call("GET", "/api/v1/signing-keys", nil)
	require.Equal(t, 200, r.Status, string(r.Raw))
	var keys []string
	for _, k := range r.Body["keys"].([]any) {
		keys = append(keys, k.(map[string]any)["public_key"].(string))
	}
	rcv.keys.Store(keys)
	return b
}

func (b *bundle) waitState(id, state string) map[string]any {
	b.t.Helper()
	var j map[string]any
	eventually(b.t, 30*time.Second, func() bool { j = b.job(id); return j["state"] == state }, "job "+id+" never "+state)
	return j
}

// A 2xx completes the job with the answer's result; a 500 fails the
// attempt with its status and body, and the retry completes. Every
// attempt of a traced job carries its trace context, as headers and in
// the body; an untraced job's carries none.
func TestPushDeliversAndRetries(t *testing.T) {
	t.Parallel()
	var bodyTraces sync.Map // "<job id>/<attempt>" → [2]string: the body's traceparent and tracestate
	rcv := newReceiver(t, func(w http.ResponseWriter, d wire.PushDelivery, n int) {
		bodyTraces.Store(fmt.Sprintf("%s/%d", d.JobID, d.Attempt), [2]string{d.TraceParent, d.TraceState})
		if string(d.Payload) == `{"flaky":true}` && d.Attempt == 1 {
			http.Error(w, "database down", 500)
			return
		}
		fmt.Fprintf(w, `{"result":{"seen":%s}}`, d.Payload)
	})
	b := pushNode(t, rcv)
	b.putQueue("hooks", map[string]any{"push": map[string]any{"url": rcv.srv.URL + "/jobs"},
		"defaults": map[string]any{"retry_base_delay": 1, "retry_max_delay": 1}})
	ok := b.enqueue(map[string]any{"queue": "hooks", "payload": map[string]any{"n": 1}})
	j := b.waitState(ok, "completed")
	require.Equal(t, map[string]any{"seen": map[string]any{"n": 1.0}}, j["result"])

	r := b.call("POST", "/api/v1/enqueue", map[string]any{"queue": "hooks", "payload": map[string]any{"flaky": true}},
		wire.TraceParentHeader, testTraceParent, wire.TraceStateHeader, testTraceState)
	require.Equal(t, 201, r.Status, string(r.Raw))
	flaky := r.Body["job_id"].(string)
	j = b.waitState(flaky, "completed")
	errs := j["errors"].([]any)
	require.Len(t, errs, 1)
	require.Contains(t, errs[0].(map[string]any)["error"], "500")
	require.Contains(t, errs[0].(map[string]any)["error"], "database down")
	require.Zero(t, rcv.bad.Load(), "every request verified")

	want := [2]string{testTraceParent, testTraceState}
	for _, attempt := range []string{"/1", "/2"} {
		h, ok := rcv.traces.Load(flaky + attempt)
		require.True(t, ok, "attempt %s delivered", attempt)
		require.Equal(t, want, h, "attempt %s: the headers", attempt)
		body, _ := bodyTraces.Load(flaky + attempt)
		require.Equal(t, want, body, "attempt %s: the body", attempt)
	}
	h, _ := rcv.traces.Load(ok + "/1")
	require.Equal(t, [2]string{}, h, "no trace context, no headers")
	body, _ := bodyTraces.Load(ok + "/1")
	require.Equal(t, [2]string{}, body)
}

// A handler slower than the timeout fails the attempt as a timeout.
func TestPushTimeout(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	rcv := newReceiver(t, func(w http.ResponseWriter, d wire.PushDelivery, n int) {
		select {
		case <-release:
		case <-time.After(5 * time.Second):
		}
	})
	b := pushNode(t, rcv)
	b.putQueue("slow", map[string]any{"push": map[string]any{"url": rcv.srv.URL, "timeout": 1},
		"defaults": map[string]any{"max_retries": 0}})
	id := b.enqueue(map[string]any{"queue": "slow", "payload": 1})
	j := b.waitState(id, "dead")
	require.Contains(t, j["errors"].([]any)[0].(map[string]any)["error"], "timeout")
}

// 429 with Retry-After gives the job back without spending its attempt.
func TestPushRetryAfter(t *testing.T) {
	t.Parallel()
	rcv := newReceiver(t, func(w http.ResponseWriter, d wire.PushDelivery, n int) {
		if n == 1 {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(429)
			return
		}
		w.WriteHeader(204)
	})
	b := pushNode(t, rcv)
	b.putQueue("busy", map[string]any{"push": map[string]any{"url": rcv.srv.URL}})
	id := b.enqueue(map[string]any{"queue": "busy", "payload": 1})
	j := b.waitState(id, "completed")
	require.EqualValues(t, 1, j["attempt"], "the 429 spent no attempt")
	require.Empty(t, j["errors"])
	require.EqualValues(t, 2, rcv.calls.Load())
}

// 410 disables push on the queue, says why, and leaves the job for pull.
func TestPushGoneDisables(t *testing.T) {
	t.Parallel()
	rcv := newReceiver(t, func(w http.ResponseWriter, d wire.PushDelivery, n int) { w.WriteHeader(410) })
	b := pushNode(t, rcv)
	b.putQueue("gone", map[string]any{"push": map[string]any{"url": rcv.srv.URL}})
	id := b.enqueue(map[string]any{"queue": "gone", "payload": 1})
	var q map[string]any
	eventually(t, 30*time.Second, func() bool {
		q = b.queueView("gone")
		return q["push"].(map[string]any)["disabled"] != nil
	}, "push never disabled")
	require.Contains(t, q["push"].(map[string]any)["disabled"].(map[string]any)["reason"], "410")
	// A long-poll of the dispatcher's that was waiting when push went
	// off may still take the job and give it straight back: a pull
	// worker gets it once it is back.
	var f resp
	eventually(t, 30*time.Second, func() bool {
		if b.job(id)["state"] != "pending" {
			return false
		}
		f = b.fetch([]string{"gone"}, nil)
		return f.Status == 200
	}, "the job was not given back to pull")
	require.Equal(t, id, f.Body["job_id"])
	require.EqualValues(t, 1, rcv.calls.Load(), "a handler that answered 410 is not called again")
}

// max_in_flight and the queue's concurrency bound the calls at once.
func TestPushBoundsInFlight(t *testing.T) {
	t.Parallel()
	gate := make(chan struct{})
	rcv := newReceiver(t, func(w http.ResponseWriter, d wire.PushDelivery, n int) { <-gate })
	b := pushNode(t, rcv)
	b.putQueue("a", map[string]any{"push": map[string]any{"url": rcv.srv.URL, "max_in_flight": 3}})
	b.putQueue("c", map[string]any{"concurrency": 2, "push": map[string]any{"url": rcv.srv.URL, "max_in_flight": 10}})
	for range 8 {
		b.enqueue(map[string]any{"queue": "a", "payload": 1})
		b.enqueue(map[string]any{"queue": "c", "payload": 1})
	}
	eventually(t, 30*time.Second, func() bool { return rcv.inFlight.Load() == 5 }, "never 3+2 calls in flight")
	require.EqualValues(t, 5, rcv.maxSeen.Load())
	close(gate)
	eventually(t, 30*time.Second, func() bool {
		return b.queueView("a")["counts"].(map[string]any)["completed"] == 8.0 &&
			b.queueView("c")["counts"].(map[string]any)["completed"] == 8.0
	}, "not all completed")
	require.EqualValues(t, 5, rcv.maxSeen.Load())
}

// A cancel aborts the call in flight, and the job ends cancelled.
func TestPushCancelAborts(t *testing.T) {
	t.Parallel()
	aborted := make(chan struct{}, 1)
	rcv := newReceiver(t, nil)
	rcv.handle = func(w http.ResponseWriter, d wire.PushDelivery, n int) {}
	b := pushNode(t, rcv)
	started := make(chan struct{}, 1)
	rcv.srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		_, _ = io.ReadAll(req.Body) // the server notices a hang-up once the body is read
		started <- struct{}{}
		select {
		case <-req.Context().Done():
			aborted <- struct{}{}
		case <-time.After(60 * time.Second):
		}
	})
	b.putQueue("long", map[string]any{"push": map[string]any{"url": rcv.srv.URL, "timeout": "5m"}})
	id := b.enqueue(map[string]any{"queue": "long", "payload": 1})
	<-started
	require.Equal(t, 200, b.call("POST", "/api/v1/jobs/"+id+"/cancel", nil).Status)
	select {
	case <-aborted:
	case <-time.After(30 * time.Second):
		t.Fatal("the call was not aborted")
	}
	b.waitState(id, "cancelled")
}

// when_no_workers pushes while no worker fetches, and yields to one that
// does.
func TestPushWhenNoWorkers(t *testing.T) {
	t.Parallel()
	rcv := newReceiver(t, func(w http.ResponseWriter, d wire.PushDelivery, n int) { w.WriteHeader(200) })
	b := pushNode(t, rcv)
	b.putQueue("spill", map[string]any{"push": map[string]any{"url": rcv.srv.URL, "mode": "when_no_workers"}})
	id := b.enqueue(map[string]any{"queue": "spill", "payload": 1})
	b.waitState(id, "completed")
	require.EqualValues(t, 1, rcv.calls.Load())

	// A worker fetches: the next job is its, not the handler's.
	require.Equal(t, 204, b.fetch([]string{"spill"}, map[string]any{"timeout": 0}).Status)
	id2 := b.enqueue(map[string]any{"queue": "spill", "payload": 2})
	f := b.fetch([]string{"spill"}, map[string]any{"timeout": 5})
	require.Equal(t, 200, f.Status, string(f.Raw))
	require.Equal(t, id2, f.Body["job_id"])
	require.EqualValues(t, 1, rcv.calls.Load())
}

// Without --push-allow-private a loopback target is refused at delivery
// too (here configured while allowed, then the guard of a node that does
// not allow it): the attempt fails naming the refusal.
func TestPushRefusedAtDelivery(t *testing.T) {
	t.Parallel()
	rcv := newReceiver(t, func(w http.ResponseWriter, d wire.PushDelivery, n int) { w.WriteHeader(200) })
	dir := t.TempDir()
	pool := x509.NewCertPool()
	pool.AddCert(rcv.srv.Certificate())
	b := start(t, dir, func(c *Config) { c.PushAllowPrivate, c.PushRootCAs = true, pool })
	b.putQueue("q", map[string]any{"paused": true, "push": map[string]any{"url": rcv.srv.URL}, "defaults": map[string]any{"max_retries": 0}})
	id := b.enqueue(map[string]any{"queue": "q", "payload": 1})
	require.NoError(t, b.srv.Stop())
	b = start(t, dir, func(c *Config) { c.PushRootCAs = pool })
	r := b.call("POST", "/api/v1/queues/q/resume", nil)
	require.Equal(t, 200, r.Status, string(r.Raw))
	j := b.waitState(id, "dead")
	require.Contains(t, j["errors"].([]any)[0].(map[string]any)["error"], "not a public address")
	require.Zero(t, rcv.calls.Load())
}

package bench

import (
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jobbie/jobbie/internal/pki"
)

// fakeShard implements enqueue, enqueue/batch, fetch and ack in memory,
// and counts what it did, so a run's report can be checked against it.
type fakeShard struct {
	srv     *httptest.Server
	pending chan string
	auth    map[string]string // headers every request must carry
	creds   *pki.Credentials  // serve TLS with these (newFakeShardTLS)

	mu          sync.Mutex
	nextID      int
	enqueued    int
	delivered   map[string]bool // job id → acked
	acked       int
	rejected    int
	rejectEvery int  // answer every n-th enqueue call with 429
	hold        bool // fetch never delivers
	// refuseForeign answers acks of jobs no run enqueued (foreign) with
	// lease_mismatch.
	refuseForeign bool
	fetchCalls    int
	ackCalls      int
}

func newFakeShard(t *testing.T, auth map[string]string) *fakeShard {
	t.Helper()
	return startFake(t, &fakeShard{pending: make(chan string, 1<<16), auth: auth, delivered: map[string]bool{}})
}

// newFakeShardTLS serves mutual TLS as a shard node with creds.
func newFakeShardTLS(t *testing.T, creds *pki.Credentials, auth map[string]string) *fakeShard {
	t.Helper()
	return startFake(t, &fakeShard{pending: make(chan string, 1<<16), auth: auth, delivered: map[string]bool{}, creds: creds})
}

func startFake(t *testing.T, f *fakeShard) *fakeShard {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/v1/enqueue", f.enqueue)
	mux.HandleFunc("POST /api/v1/enqueue/batch", f.enqueueBatch)
	mux.HandleFunc("POST /api/v1/fetch", f.fetch)
	mux.HandleFunc("POST /api/v1/fetch/batch", f.fetchBatch)
	mux.HandleFunc("POST /api/v1/ack/batch", f.ackBatch)
	mux.HandleFunc("POST /api/v1/ack/{id}", f.ack)
	f.srv = httptest.NewUnstartedServer(f.authorize(mux))
	if f.creds != nil { // a shard's certificate, and the caller must show an operator's
		// StartTLS would serve httptest's own certificate; wrap the
		// listener instead.
		f.srv.Listener = tls.NewListener(f.srv.Listener, f.creds.Server(pki.Roles(pki.RoleOperator)))
		f.srv.Start()
		f.srv.URL = "https://" + f.srv.Listener.Addr().String()
	} else {
		f.srv.Start()
	}
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeShard) authorize(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for k, v := range f.auth {
			if r.Header.Get(k) != v {
				apiError(w, http.StatusUnauthorized, "unauthenticated", "bad "+k)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// foreign leaves jobs in the queue that no run enqueued.
func (f *fakeShard) foreign(n int) {
	for i := range n {
		f.pending <- fmt.Sprintf("job_old_%d", i)
	}
}

// add enqueues n jobs, or rejects the call.
func (f *fakeShard) add(w http.ResponseWriter, r *http.Request, n int) ([]string, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.rejectEvery > 0 && (f.enqueued/n+f.rejected+1)%f.rejectEvery == 0 {
		f.rejected++
		apiError(w, http.StatusTooManyRequests, "rate_limited", "slow down")
		return nil, false
	}
	ids := make([]string, n)
	for i := range ids {
		f.nextID++
		ids[i] = fmt.Sprintf("job_%08d", f.nextID)
		f.pending <- ids[i]
	}
	f.enqueued += n
	return ids, true
}

func (f *fakeShard) enqueue(w http.ResponseWriter, r *http.Request) {
	var job struct {
		Queue   string          `json:"queue"`
		Payload json.RawMessage `json:"payload"`
	}
	if err := json.NewDecoder(r.Body).Decode(&job); err != nil || job.Queue == "" {
		apiError(w, http.StatusBadRequest, "bad_request", "bad job")
		return
	}
	if ids, ok := f.add(w, r, 1); ok {
		writeReply(w, http.StatusCreated, map[string]any{"job_id": ids[0], "status": "pending", "unique_existing": false})
	}
}

func (f *fakeShard) enqueueBatch(w http.ResponseWriter, r *http.Request) {
	var batch struct {
		Jobs []json.RawMessage `json:"jobs"`
	}
	if err := json.NewDecoder(r.Body).Decode(&batch); err != nil || len(batch.Jobs) == 0 {
		apiError(w, http.StatusBadRequest, "bad_request", "bad batch")
		return
	}
	if ids, ok := f.add(w, r, len(batch.Jobs)); ok {
		writeReply(w, http.StatusCreated, map[string]any{"job_ids": ids})
	}
}

func (f *fakeShard) fetch(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Queues   []string `json:"queues"`
		WorkerID string   `json:"worker_id"`
		Timeout  float64  `json:"timeout"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.Queues) != 1 || req.WorkerID == "" {
		apiError(w, http.StatusBadRequest, "bad_request", "bad fetch")
		return
	}
	f.mu.Lock()
	hold := f.hold
	f.mu.Unlock()
	timer := time.NewTimer(time.Duration(req.Timeout * float64(time.Second)))
	defer timer.Stop()
	pending := f.pending
	if hold {
		pending = nil
	}
	select {
	case id := <-pending:
		f.mu.Lock()
		f.delivered[id] = false
		f.mu.Unlock()
		writeReply(w, http.StatusOK, map[string]any{
			"job_id": id, "queue": req.Queues[0], "payload": map[string]string{"d": "x"},
			"attempt": 1, "max_retries": 3, "lease_duration": 60, "checkpoint": nil,
		})
	case <-timer.C:
		w.WriteHeader(http.StatusNoContent)
	case <-r.Context().Done():
	}
}

func (f *fakeShard) ack(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.ackCalls++
	ok := f.settle(r.PathValue("id"))
	f.mu.Unlock()
	if !ok {
		apiError(w, http.StatusConflict, "lease_mismatch", "not active")
		return
	}
	writeReply(w, http.StatusOK, map[string]string{"status": "completed"})
}

// settle acks a delivered job once; f.mu is held.
func (f *fakeShard) settle(id string) bool {
	acked, ok := f.delivered[id]
	if !ok || acked || (f.refuseForeign && strings.HasPrefix(id, "job_old_")) {
		return false
	}
	f.delivered[id] = true
	f.acked++
	return true
}

// fetchBatch waits like fetch for a first job, then takes up to max.
func (f *fakeShard) fetchBatch(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Queues   []string `json:"queues"`
		WorkerID string   `json:"worker_id"`
		Timeout  float64  `json:"timeout"`
		Max      int      `json:"max"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.Queues) != 1 || req.WorkerID == "" || req.Max < 1 {
		apiError(w, http.StatusBadRequest, "bad_request", "bad fetch batch")
		return
	}
	f.mu.Lock()
	f.fetchCalls++
	hold := f.hold
	f.mu.Unlock()
	timer := time.NewTimer(time.Duration(req.Timeout * float64(time.Second)))
	defer timer.Stop()
	pending := f.pending
	if hold {
		pending = nil
	}
	var ids []string
	select {
	case id := <-pending:
		ids = append(ids, id)
	case <-timer.C:
	case <-r.Context().Done():
		return
	}
	for len(ids) > 0 && len(ids) < req.Max {
		select {
		case id := <-pending:
			ids = append(ids, id)
			continue
		default:
		}
		break
	}
	jobs := make([]map[string]any, len(ids))
	f.mu.Lock()
	for i, id := range ids {
		f.delivered[id] = false
		jobs[i] = map[string]any{"job_id": id, "queue": req.Queues[0], "payload": map[string]string{"d": "x"},
			"attempt": 1, "max_retries": 3, "lease_duration": 60, "checkpoint": nil}
	}
	f.mu.Unlock()
	writeReply(w, http.StatusOK, map[string]any{"jobs": jobs})
}

// ackBatch acks each job, answering per job.
func (f *fakeShard) ackBatch(w http.ResponseWriter, r *http.Request) {
	var req struct {
		WorkerID string `json:"worker_id"`
		Acks     []struct {
			JobID string `json:"job_id"`
		} `json:"acks"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.Acks) == 0 || req.WorkerID == "" {
		apiError(w, http.StatusBadRequest, "bad_request", "bad ack batch")
		return
	}
	out := make([]map[string]any, len(req.Acks))
	f.mu.Lock()
	f.ackCalls++
	for i, a := range req.Acks {
		out[i] = map[string]any{"job_id": a.JobID, "status": "completed"}
		if !f.settle(a.JobID) {
			out[i] = map[string]any{"job_id": a.JobID, "error": map[string]string{"code": "lease_mismatch", "message": "not active"}}
		}
	}
	f.mu.Unlock()
	writeReply(w, http.StatusOK, map[string]any{"results": out})
}

// counts returns enqueued, delivered, acked and rejected.
func (f *fakeShard) counts() (enq, del, ack, rej int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.enqueued, len(f.delivered), f.acked, f.rejected
}

func writeReply(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func apiError(w http.ResponseWriter, status int, code, msg string) {
	writeReply(w, status, map[string]any{"error": map[string]string{"code": code, "message": msg}})
}

// lines is a concurrency-safe writer for Run's output.
type lines struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

package e2e

import (
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/wire"
)

// pushReceiver is a tenant's push handler in the test process: HTTPS on
// 127.0.0.1 with its own certificate (written to certFile for the
// servers' --push-ca-file), verifying every request with the SDK's
// client.VerifyWebhook and recording each delivery.
type pushReceiver struct {
	srv      *httptest.Server
	certFile string
	keys     atomic.Value  // []string: the namespace's public keys
	bad      atomic.Int64  // requests that did not verify
	hold     func(n int64) // called with each verified delivery's number before it answers

	mu    sync.Mutex
	seen  map[string][]int // job id → attempts delivered, in order
	count atomic.Int64
}

func newPushReceiver(t *testing.T) *pushReceiver {
	r := &pushReceiver{seen: map[string][]int{}, hold: func(int64) {}}
	r.srv = httptest.NewUnstartedServer(http.HandlerFunc(r.serve))
	r.srv.StartTLS()
	t.Cleanup(r.srv.Close)
	r.certFile = filepath.Join(t.TempDir(), "receiver.crt")
	require.NoError(t, os.WriteFile(r.certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: r.srv.Certificate().Raw}), 0o600))
	return r
}

func (r *pushReceiver) serve(w http.ResponseWriter, req *http.Request) {
	body, err := io.ReadAll(req.Body)
	if err != nil {
		return
	}
	keys, _ := r.keys.Load().([]string)
	if err := client.VerifyWebhook(req.Header, body, keys, time.Minute); err != nil {
		r.bad.Add(1)
		http.Error(w, err.Error(), http.StatusUnauthorized)
		return
	}
	var d wire.PushDelivery
	if err := json.Unmarshal(body, &d); err != nil || req.Header.Get("webhook-id") != fmt.Sprintf("%s_%d", d.JobID, d.Attempt) {
		r.bad.Add(1)
		http.Error(w, "not a delivery", http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	r.seen[d.JobID] = append(r.seen[d.JobID], d.Attempt)
	r.mu.Unlock()
	r.hold(r.count.Add(1))
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"result":{"attempt":%d}}`, d.Attempt)
}

func (r *pushReceiver) attempts(id string) []int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]int(nil), r.seen[id]...)
}

// A push flood to a 3-node shard: the leader is killed (SIGKILL) while
// deliveries are in flight. The new leader delivers what the old one
// held once those leases run out: every job is delivered at least once,
// every request verifies, and each job's record is completed exactly
// once, by its last attempt, with one error for each attempt before it.
func TestPushFloodSurvivesLeaderKill(t *testing.T) {
	rcv := newPushReceiver(t)
	c := newShardCluster(t, 3, "--push-allow-private", "--push-ca-file", rcv.certFile)
	leader := c.leader()

	code, raw, err := c.do(leader, http.MethodGet, "/api/v1/signing-keys", nil)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, code, string(raw))
	var keys wire.WebhookKeyList
	require.NoError(t, json.Unmarshal(raw, &keys))
	var pub []string
	for _, k := range keys.Keys {
		pub = append(pub, k.Key)
	}
	require.NotEmpty(t, pub)
	rcv.keys.Store(pub)

	// The receiver holds every delivery after the first third until the
	// leader is dead, and the kill comes once it holds 8 (of the 16 the
	// queue has in flight): their answers never reach the leader.
	const total, held = 300, 8
	reached, killed := make(chan struct{}), make(chan struct{})
	var holding atomic.Int64
	rcv.hold = func(n int64) {
		if n < total/3 {
			return
		}
		if holding.Add(1) == held {
			close(reached)
		}
		<-killed
	}
	t.Cleanup(func() {
		select {
		case <-killed:
		default:
			close(killed)
		}
	})

	code, raw, err = c.do(leader, http.MethodPut, "/api/v1/queues/flood", map[string]any{
		"push":     map[string]any{"url": rcv.srv.URL + "/jobs", "timeout": 1, "max_in_flight": 16},
		"defaults": map[string]any{"retry_base_delay": 1, "retry_max_delay": 1}})
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, code, string(raw))
	jobs := make([]map[string]any, total)
	for i := range jobs {
		jobs[i] = map[string]any{"queue": "flood", "payload": map[string]int{"seq": i}}
	}
	code, raw, err = c.do(leader, http.MethodPost, "/api/v1/enqueue/batch", map[string]any{"jobs": jobs})
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, code, string(raw))
	var enq struct {
		JobIDs []string `json:"job_ids"`
	}
	require.NoError(t, json.Unmarshal(raw, &enq))
	require.Len(t, enq.JobIDs, total)

	select {
	case <-reached:
	case <-time.After(60 * time.Second):
		t.Fatalf("the flood never reached %d deliveries (%d)", total/3, rcv.count.Load())
	}
	c.kill(leader.id)
	close(killed)
	next := c.leader()
	require.NotEqual(t, leader.id, next.id)

	var completed float64
	eventually(t, 90*time.Second, func() bool {
		code, raw, err := c.do(next, http.MethodGet, "/api/v1/queues/flood", nil)
		if err != nil || code != http.StatusOK {
			return false
		}
		var q wire.Queue
		if json.Unmarshal(raw, &q) != nil {
			return false
		}
		completed = float64(q.Counts.Completed)
		return q.Counts.Completed == total
	}, fmt.Sprintf("every pushed job completes after the leader's kill (%v of %d)", completed, total))

	redelivered := 0
	for _, id := range enq.JobIDs {
		code, raw, err := c.do(next, http.MethodGet, "/api/v1/jobs/"+id, nil)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, code, string(raw))
		var j wire.JobDetail
		require.NoError(t, json.Unmarshal(raw, &j))
		require.Equal(t, "completed", j.State, id)
		done := 0
		for _, e := range j.Timeline {
			if e.Event == "completed" {
				done++
			}
		}
		require.Equal(t, 1, done, "job %s completed once in its record: %+v", id, j.Timeline)
		seen := rcv.attempts(id)
		require.NotEmpty(t, seen, "job %s was delivered", id)
		require.Equal(t, j.Attempt, seen[len(seen)-1], "job %s: the record's attempt is the last one delivered (%v)", id, seen)
		require.JSONEq(t, fmt.Sprintf(`{"attempt":%d}`, j.Attempt), string(j.Result), "job %s completed by its last attempt", id)
		require.Len(t, j.Errors, j.Attempt-1, "job %s: an error for each attempt before the last: %+v", id, j.Errors)
		if len(seen) > 1 {
			redelivered++
		}
	}
	require.Zero(t, rcv.bad.Load(), "every request verified")
	require.GreaterOrEqual(t, redelivered, held, "the deliveries held at the kill were made again")
	t.Logf("%d jobs, %d deliveries, %d jobs delivered more than once", total, rcv.count.Load(), redelivered)
}

// Without --push-allow-private, a push queue aimed inside (loopback,
// private, link-local metadata, IPv6 loopback, a name that resolves to
// loopback) is refused through the gateway with a 400 naming push.url,
// and the queue stays as it was.
func TestPushInsideTargetsRefusedThroughGateway(t *testing.T) {
	t.Parallel()
	_, ct := shared.tenant(t)
	key := ct.OwnerKey
	q := shared.gateway + "/api/v1/queues/hooks"
	before := call(t, "PUT", q, key, map[string]any{"description": "before"})
	require.Equal(t, 200, before.Status, string(before.Raw))
	for _, u := range []string{
		"https://127.0.0.1/jobs", "https://127.0.0.1:8443/jobs", "https://10.0.0.1/jobs",
		"https://169.254.169.254/latest/meta-data", "https://[::1]/jobs", "https://[::1]:8443/jobs",
		"https://localhost/jobs", "https://[::ffff:127.0.0.1]/jobs",
	} {
		r := call(t, "PUT", q, key, map[string]any{"description": "after", "push": map[string]any{"url": u}})
		require.Equal(t, 400, r.Status, "%s: %s", u, r.Raw)
		require.Equal(t, "push.url", r.field(), "%s: %s", u, r.Raw)
		require.Contains(t, string(r.Raw), "push.url", u)
	}
	got := call(t, "GET", q, key, nil)
	require.Equal(t, 200, got.Status, string(got.Raw))
	require.Equal(t, "before", got.Body["description"], "a refused PUT changes nothing")
	require.Nil(t, got.Body["push"])
}

// `jobbie dev --push-allow-private --push-ca-file <receiver's cert>`: a
// tenant reads its signing keys and declares a push queue through the
// gateway, and its jobs are delivered to the receiver, verified, and
// completed with the handler's result.
func TestPushThroughTheGatewayToATrustedReceiver(t *testing.T) {
	t.Parallel()
	rcv := newPushReceiver(t)
	d, err := launch(filepath.Join(t.TempDir(), "dev"), "--push-allow-private", "--push-ca-file", rcv.certFile)
	require.NoError(t, err)
	t.Cleanup(d.stop)
	_, ct := d.tenant(t)
	key := ct.OwnerKey

	keys := call(t, "GET", d.gateway+"/api/v1/signing-keys", key, nil)
	require.Equal(t, 200, keys.Status, string(keys.Raw))
	var list wire.WebhookKeyList
	require.NoError(t, json.Unmarshal(keys.Raw, &list))
	require.NotEmpty(t, list.Keys)
	rcv.keys.Store([]string{list.Keys[0].Key})

	q := call(t, "PUT", d.gateway+"/api/v1/queues/hooks", key, map[string]any{"push": map[string]any{"url": rcv.srv.URL + "/jobs"}})
	require.Equal(t, 200, q.Status, string(q.Raw))
	var ids []string
	for i := range 20 {
		e := call(t, "POST", d.gateway+"/api/v1/enqueue", key, map[string]any{"queue": "hooks", "payload": map[string]int{"i": i}})
		require.Equal(t, 201, e.Status, string(e.Raw))
		ids = append(ids, e.Body["job_id"].(string))
	}
	for _, id := range ids {
		var j reply
		eventually(t, 30*time.Second, func() bool {
			j = call(t, "GET", d.gateway+"/api/v1/jobs/"+id, key, nil)
			return j.Body["state"] == "completed"
		}, "job "+id+" is pushed and completed")
		require.Equal(t, map[string]any{"attempt": 1.0}, j.Body["result"])
		require.Equal(t, []int{1}, rcv.attempts(id))
	}
	require.Zero(t, rcv.bad.Load(), "every request verified")
}

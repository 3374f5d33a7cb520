package shard

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/wire"
)

// cancelsOf reads a fetch/batch answer's cancels.
func cancelsOf(t *testing.T, r resp) []any {
	t.Helper()
	require.Equal(t, 200, r.Status, string(r.Raw))
	c, _ := r.Body["cancels"].([]any)
	return c
}

// A worker's fetch/batch waiting with max 0 (no room for a job) answers
// when a job leased to it is cancelled, naming the job and its lease,
// once; another worker id, the same worker id in another namespace, and
// a queue scope that does not show the job are never told. A drain
// reaches such a fetch too, and max 0 without a worker id is refused.
func TestCancelReachesTheWorkersWaitingFetch(t *testing.T) {
	t.Parallel()
	b := setup(t)
	id := b.enqueue(map[string]any{"queue": "q", "payload": 1})
	one := 1
	f := b.call("POST", "/api/v1/fetch/batch", map[string]any{"queues": []string{"q"}, "worker_id": "w1", "max": one, "timeout": 0})
	require.Equal(t, 200, f.Status, string(f.Raw))
	jobs := f.Body["jobs"].([]any)
	require.Len(t, jobs, 1)
	token := jobs[0].(map[string]any)["lease_token"].(string)

	waiting := make(chan resp, 1)
	go func() {
		waiting <- b.call("POST", "/api/v1/fetch/batch", map[string]any{"queues": []string{"q"}, "worker_id": "w1", "max": 0, "timeout": 60})
	}()
	// Parked or not yet, the fetch answers with the cancel: a cancel it
	// has not told waits for it.
	cancelled := time.Now()
	r := b.call("POST", "/api/v1/jobs/"+id+"/cancel", nil)
	require.Equal(t, wire.CancelRequested, r.Body["status"], string(r.Raw))
	select {
	case got := <-waiting:
		t.Logf("the waiting fetch answered %s after the cancel", time.Since(cancelled))
		require.Equal(t, []any{map[string]any{"job_id": id, "lease_token": token}}, cancelsOf(t, got))
		require.Equal(t, []any{}, got.Body["jobs"], "max 0 leases nothing")
	case <-time.After(30 * time.Second):
		t.Fatal("the waiting fetch did not answer on the cancel")
	}

	quick := map[string]any{"queues": []string{"q"}, "worker_id": "w1", "max": 0, "timeout": 0.2}
	require.Empty(t, cancelsOf(t, b.call("POST", "/api/v1/fetch/batch", quick)), "told once")
	quick["worker_id"] = "w2"
	require.Empty(t, cancelsOf(t, b.call("POST", "/api/v1/fetch/batch", quick)), "another worker")

	// A second job of w1, cancelled: a fetch in another namespace, or
	// under a scope that does not show its queue, is not told; w1's own
	// is.
	id2 := b.enqueue(map[string]any{"queue": "q", "payload": 2})
	f = b.call("POST", "/api/v1/fetch/batch", map[string]any{"queues": []string{"q"}, "worker_id": "w1", "max": one, "timeout": 0})
	require.Len(t, f.Body["jobs"], 1)
	require.Equal(t, 200, b.call("POST", "/api/v1/jobs/"+id2+"/cancel", nil).Status)
	quick["worker_id"] = "w1"
	other := b.call("POST", "/api/v1/fetch/batch", quick, wire.ShardNamespaceHeader, "t_01hx0000000000000000000001/default")
	require.Empty(t, cancelsOf(t, other), "the same worker id in another namespace")
	scoped := map[string]any{"queues": []string{"elsewhere"}, "worker_id": "w1", "max": 0, "timeout": 0.2}
	require.Empty(t, cancelsOf(t, b.withScope("elsewhere").call("POST", "/api/v1/fetch/batch", scoped)), "a scope without queue q")
	mine := cancelsOf(t, b.call("POST", "/api/v1/fetch/batch", map[string]any{"queues": []string{"q"}, "worker_id": "w1", "max": 0, "timeout": 60}))
	require.Len(t, mine, 1)
	require.Equal(t, id2, mine[0].(map[string]any)["job_id"])

	// A drain answers a fetch waiting with max 0, which waits on no queue.
	go func() {
		waiting <- b.call("POST", "/api/v1/fetch/batch", map[string]any{"queues": []string{"q"}, "worker_id": "w1", "max": 0, "timeout": 60})
	}()
	require.Equal(t, 200, b.call("POST", "/api/v1/workers/w1/drain", nil).Status)
	select {
	case got := <-waiting:
		require.Equal(t, 200, got.Status, string(got.Raw))
		require.Equal(t, "true", got.Header.Get(wire.WorkerDrainHeader))
	case <-time.After(30 * time.Second):
		t.Fatal("the waiting fetch did not answer on the drain")
	}

	bad := b.call("POST", "/api/v1/fetch/batch", map[string]any{"queues": []string{"q"}, "max": 0, "timeout": 0})
	require.Equal(t, 400, bad.Status, string(bad.Raw))
	require.Equal(t, "max", errField(bad))
	bad = b.call("POST", "/api/v1/fetch/batch", map[string]any{"queues": []string{"q"}, "worker_id": "w9", "max": -1, "timeout": 0})
	require.Equal(t, "max", errField(bad))
}

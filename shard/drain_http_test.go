package shard

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/wire"
)

// A drained worker's fetches answer at once with no job and the drain
// header, its heartbeats say drain, the worker list shows it draining;
// other workers fetch as before. An unknown worker or a bad id changes
// nothing.
func TestWorkerDrainOverHTTP(t *testing.T) {
	t.Parallel()
	b := setup(t)
	r := b.call("POST", "/api/v1/workers/w1/drain", nil)
	require.Equal(t, 404, r.Status, "never seen: %s", r.Raw)
	r = b.call("POST", "/api/v1/workers/"+strings.Repeat("w", wire.MaxWorkerID+1)+"/drain", nil)
	require.Equal(t, 400, r.Status, string(r.Raw))

	held := b.enqueue(map[string]any{"queue": "q", "payload": 1})
	f := b.fetch([]string{"q"}, nil) // worker w1
	require.Equal(t, 200, f.Status, string(f.Raw))
	require.Equal(t, held, f.Body["job_id"])
	require.Empty(t, f.Header.Get(wire.WorkerDrainHeader))

	r = b.call("POST", "/api/v1/workers/w1/drain", nil)
	require.Equal(t, 200, r.Status, string(r.Raw))
	require.Equal(t, map[string]any{"worker_id": "w1", "draining": true}, r.Body)

	next := b.enqueue(map[string]any{"queue": "q", "payload": 2})
	f = b.fetch([]string{"q"}, map[string]any{"timeout": 20})
	require.Equal(t, 204, f.Status, "at once, with no job: %s", f.Raw)
	require.Equal(t, "true", f.Header.Get(wire.WorkerDrainHeader))
	f = b.call("POST", "/api/v1/fetch/batch", map[string]any{"queues": []string{"q"}, "worker_id": "w1", "timeout": 20})
	require.Equal(t, 200, f.Status, string(f.Raw))
	require.Equal(t, []any{}, f.Body["jobs"])
	require.Equal(t, "true", f.Header.Get(wire.WorkerDrainHeader))

	hb := b.call("POST", "/api/v1/heartbeat", map[string]any{"worker_id": "w1", "jobs": map[string]any{held: map[string]any{}}})
	require.Equal(t, 200, hb.Status, string(hb.Raw))
	require.Equal(t, true, hb.Body["drain"])
	require.Equal(t, "ok", hb.Body["jobs"].(map[string]any)[held].(map[string]any)["status"], "its held job goes on")

	ws := b.call("GET", "/api/v1/workers", nil)
	require.Equal(t, 200, ws.Status)
	w := ws.Body["workers"].([]any)[0].(map[string]any)
	require.Equal(t, "w1", w["id"])
	require.Equal(t, true, w["draining"])

	// A fetch it had parked before the drain answers as the drain lands.
	parked := make(chan resp, 1)
	go func() {
		parked <- b.call("POST", "/api/v1/fetch", map[string]any{"queues": []string{"idle"}, "worker_id": "w3", "timeout": 60})
	}()
	eventually(t, 30*time.Second, func() bool {
		for _, w := range b.call("GET", "/api/v1/workers", nil).Body["workers"].([]any) {
			if w.(map[string]any)["id"] == "w3" {
				return true
			}
		}
		return false
	}, "w3 is seen")
	require.Equal(t, 200, b.call("POST", "/api/v1/workers/w3/drain", nil).Status)
	select {
	case f := <-parked:
		require.Equal(t, 204, f.Status)
		require.Equal(t, "true", f.Header.Get(wire.WorkerDrainHeader))
	case <-time.After(30 * time.Second):
		t.Fatal("the parked fetch did not answer on the drain")
	}

	// It still settles what it holds; the other job waits for another.
	require.Equal(t, 200, b.call("POST", "/api/v1/ack/"+held, map[string]any{"worker_id": "w1"}).Status)
	require.Equal(t, "pending", b.job(next)["state"])
	f = b.fetch([]string{"q"}, map[string]any{"worker_id": "w2"})
	require.Equal(t, 200, f.Status, string(f.Raw))
	require.Equal(t, next, f.Body["job_id"])
	hb = b.call("POST", "/api/v1/heartbeat", map[string]any{"worker_id": "w2", "jobs": map[string]any{next: map[string]any{}}})
	require.Nil(t, hb.Body["drain"])
}

package shard

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// A worker id starting "push:" is the push dispatcher's (its settles are
// metered as push deliveries): every route that takes a worker id
// refuses it from a client with a 400 naming worker_id, and nothing
// changes: a pending job stays pending, a leased one stays leased to its
// worker.
func TestClientMayNotUsePushWorkerID(t *testing.T) {
	t.Parallel()
	b := setup(t)
	n := b.in(testNS)
	pending := n.ok("POST", "/api/v1/enqueue", map[string]any{"queue": "q", "payload": 1}, 201).Body["job_id"].(string)
	for _, c := range []struct{ path string }{{"/api/v1/fetch"}, {"/api/v1/fetch/batch"}} {
		r := n.call("POST", c.path, map[string]any{"queues": []string{"q"}, "worker_id": "push:q", "timeout": 0})
		require.Equal(t, 400, r.Status, "%s: %s", c.path, r.Raw)
		require.Equal(t, "worker_id", errField(r), c.path)
	}
	require.Equal(t, "pending", b.job(pending)["state"], "no fetch leased it")

	f := n.ok("POST", "/api/v1/fetch", map[string]any{"queues": []string{"q"}, "worker_id": "w", "timeout": 0}, 200).Body
	require.Equal(t, pending, f["job_id"])
	id, token := pending, f["lease_token"]
	for _, c := range []struct {
		path string
		body map[string]any
	}{
		{"/api/v1/ack/" + id, map[string]any{"worker_id": "push:q", "lease_token": token}},
		{"/api/v1/ack/batch", map[string]any{"worker_id": "push:q", "acks": []any{map[string]any{"job_id": id, "lease_token": token}}}},
		{"/api/v1/fail/" + id, map[string]any{"worker_id": "push:q", "error": "x", "lease_token": token}},
		{"/api/v1/heartbeat", map[string]any{"worker_id": "push:", "jobs": map[string]any{id: map[string]any{"lease_token": token}}}},
		{"/api/v1/release", map[string]any{"worker_id": "push:other", "jobs": []any{map[string]any{"job_id": id, "attempt": 1, "lease_token": token}}}},
	} {
		r := n.call("POST", c.path, c.body)
		require.Equal(t, 400, r.Status, "%s: %s", c.path, r.Raw)
		require.Equal(t, "worker_id", errField(r), c.path)
		require.Contains(t, string(r.Raw), "push dispatcher", c.path)
	}
	j := b.job(id)
	require.Equal(t, "active", j["state"], "nothing settled or released it")
	require.Empty(t, j["errors"])

	// Ids that merely contain or resemble it are a worker's own.
	n.ok("POST", "/api/v1/ack/"+id, map[string]any{"worker_id": "w", "lease_token": token}, 200)
	n.ok("POST", "/api/v1/enqueue", map[string]any{"queue": "q", "payload": 1}, 201)
	n.ok("POST", "/api/v1/fetch", map[string]any{"queues": []string{"q"}, "worker_id": "my-push:q", "timeout": 0}, 200)
}

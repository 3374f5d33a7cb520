package e2e

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/wire"
)

// Through the real binary: the plan's max_payload_bytes holds on what a
// worker stores (a checkpoint, a result) and on a chain step's payload,
// not only on an enqueue's payload; a hard monthly executions cap bounds
// a fetch/batch to what is left, and the next fetch is refused at once,
// before the ledger has counted the leases.
func TestPlanLimitsOnEveryPath(t *testing.T) {
	t.Parallel()
	_, ct, _ := tenantOnPlan(t, map[string]any{
		"limits": map[string]any{"max_payload_bytes": 500, "monthly_executions": 3, "monthly_executions_enforcement": "hard",
			"requests_per_second": 10000},
	})
	big := strings.Repeat("x", 600)
	r := call(t, http.MethodPost, shared.gateway+"/api/v1/enqueue", ct.OwnerKey, map[string]any{"queue": "p",
		"chain": map[string]any{"steps": []any{map[string]any{}, map[string]any{"queue": "p2", "payload": big}}}})
	require.Equal(t, http.StatusRequestEntityTooLarge, r.Status, "body: %s", r.Raw)
	require.Contains(t, string(r.Raw), "chain.steps[1].payload")

	jobs := make([]any, 10)
	for i := range jobs {
		jobs[i] = map[string]any{"queue": "p", "payload": i}
	}
	r = call(t, http.MethodPost, shared.gateway+"/api/v1/enqueue/batch", ct.OwnerKey, map[string]any{"jobs": jobs})
	require.Equal(t, http.StatusCreated, r.Status, "body: %s", r.Raw)

	r = call(t, http.MethodPost, shared.gateway+"/api/v1/fetch/batch", ct.OwnerKey,
		map[string]any{"queues": []string{"p"}, "worker_id": "w", "max": 100, "timeout": 5})
	require.Equal(t, http.StatusOK, r.Status, "body: %s", r.Raw)
	leased, _ := r.Body["jobs"].([]any)
	require.Len(t, leased, 3, "the cap's 3 executions, not the 100 asked for")
	id := leased[0].(map[string]any)["job_id"].(string)

	r = call(t, http.MethodPost, shared.gateway+"/api/v1/heartbeat", ct.OwnerKey,
		map[string]any{"worker_id": "w", "jobs": map[string]any{id: map[string]any{"checkpoint": big}}})
	require.Equal(t, http.StatusRequestEntityTooLarge, r.Status, "body: %s", r.Raw)
	require.Contains(t, string(r.Raw), "checkpoint")
	r = call(t, http.MethodPost, shared.gateway+"/api/v1/ack/"+id, ct.OwnerKey, map[string]any{"worker_id": "w", "result": big})
	require.Equal(t, http.StatusRequestEntityTooLarge, r.Status, "body: %s", r.Raw)
	require.Equal(t, "result", r.Body["error"].(map[string]any)["field"])
	r = call(t, http.MethodGet, shared.gateway+"/api/v1/jobs/"+id, ct.OwnerKey, nil)
	require.Equal(t, http.StatusOK, r.Status, "body: %s", r.Raw)
	require.Equal(t, wire.StateActive, r.Body["state"], "the refused ack changed nothing")

	r = call(t, http.MethodPost, shared.gateway+"/api/v1/fetch/batch", ct.OwnerKey,
		map[string]any{"queues": []string{"p"}, "worker_id": "w", "max": 100, "timeout": 0})
	require.Equal(t, http.StatusTooManyRequests, r.Status, "body: %s", r.Raw)
	require.Equal(t, "quota_exceeded", r.code())
}

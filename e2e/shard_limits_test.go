package e2e

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// max_pending_jobs is enforced exactly by the shard: it counts every job
// of the namespace not finished (pending, scheduled, retrying, held,
// active), refuses a whole request that would pass the limit and changes
// nothing then; an enqueue its unique key turns into the existing job
// adds nothing; a finished (cancelled) job makes room. The plan is put on
// control and carried by the gateway (tenantOnPlan).
func TestShardMaxPendingJobsExact(t *testing.T) {
	t.Parallel()
	_, ct, _ := tenantOnPlan(t, map[string]any{
		"limits": map[string]any{"max_pending_jobs": 5, "requests_per_second": 10000},
	})
	g := shared.gateway + "/api/v1"
	post := func(path string, body any) reply { return call(t, http.MethodPost, g+path, ct.OwnerKey, body) }
	counts := func() map[string]any {
		r := call(t, http.MethodGet, g+"/queues/lim", ct.OwnerKey, nil)
		require.Equal(t, http.StatusOK, r.Status, "body: %s", r.Raw)
		return r.Body["counts"].(map[string]any)
	}
	refused := func(r reply) {
		t.Helper()
		require.Equal(t, http.StatusTooManyRequests, r.Status, "body: %s", r.Raw)
		require.Equal(t, "quota_exceeded", r.code())
		require.Contains(t, string(r.Raw), "max_pending_jobs is 5")
	}
	job := func(extra map[string]any) map[string]any {
		j := map[string]any{"queue": "lim", "payload": 1}
		for k, v := range extra {
			j[k] = v
		}
		return j
	}

	r := post("/enqueue/batch", map[string]any{"jobs": []any{job(nil), job(nil), job(nil)}})
	require.Equal(t, http.StatusCreated, r.Status, "body: %s", r.Raw)
	later := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	r = post("/enqueue", job(map[string]any{"scheduled_at": later}))
	require.Equal(t, http.StatusCreated, r.Status, "a scheduled job: %s", r.Raw)

	// 4 unfinished: a batch of 2 would make 6, and is refused whole.
	refused(post("/enqueue/batch", map[string]any{"jobs": []any{job(nil), job(nil)}}))
	c := counts()
	require.EqualValues(t, 3, c["pending"], "nothing of the refused batch")
	require.EqualValues(t, 1, c["scheduled"])

	r = post("/enqueue", job(map[string]any{"unique_key": "once"}))
	require.Equal(t, http.StatusCreated, r.Status, "the fifth: %s", r.Raw)
	r = post("/enqueue", job(map[string]any{"unique_key": "once"}))
	require.Equal(t, http.StatusOK, r.Status, "the same unique key adds nothing, so it is not refused: %s", r.Raw)
	require.Equal(t, true, r.Body["unique_existing"])
	refused(post("/enqueue", job(nil)))

	// Active and retrying jobs still count.
	r = post("/fetch", map[string]any{"queues": []string{"lim"}, "worker_id": "w", "timeout": 5})
	require.Equal(t, http.StatusOK, r.Status, "body: %s", r.Raw)
	active := r.Body["job_id"].(string)
	refused(post("/enqueue", job(nil)))
	r = post("/fail/"+active, map[string]any{"worker_id": "w", "error": "boom"})
	require.Less(t, r.Status, 300, "body: %s", r.Raw)
	refused(post("/enqueue", job(nil)))

	// A cancelled job is finished: room for exactly one.
	r = post("/jobs/"+active+"/cancel", nil)
	require.Less(t, r.Status, 300, "body: %s", r.Raw)
	r = post("/enqueue", job(nil))
	require.Equal(t, http.StatusCreated, r.Status, "body: %s", r.Raw)
	refused(post("/enqueue", job(nil)))
}

package shard

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/wire"
)

// The gateway's max_pending_jobs reaches the state machine: enqueues,
// single and batch, are refused whole past it (429 quota_exceeded naming
// the limit) and a bad value is a 400 naming the header. A request
// without the header has no limit.
func TestMaxPendingJobsHeader(t *testing.T) {
	t.Parallel()
	b := setup(t)
	limit := []string{wire.MaxPendingJobsHeader, "3"}
	one := map[string]any{"queue": "lim", "payload": 1}
	r := b.call("POST", "/api/v1/enqueue/batch", map[string]any{"jobs": []any{one, one}}, limit...)
	require.Equal(t, 201, r.Status, string(r.Raw))
	r = b.call("POST", "/api/v1/enqueue/batch", map[string]any{"jobs": []any{one, one}}, limit...)
	require.Equal(t, 429, r.Status, string(r.Raw))
	require.Contains(t, string(r.Raw), `"quota_exceeded"`)
	require.Contains(t, string(r.Raw), "max_pending_jobs is 3")
	r = b.call("POST", "/api/v1/enqueue", one, limit...)
	require.Equal(t, 201, r.Status, string(r.Raw))
	r = b.call("POST", "/api/v1/enqueue", one, limit...)
	require.Equal(t, 429, r.Status, string(r.Raw))
	r = b.call("POST", "/api/v1/enqueue", one, wire.MaxPendingJobsHeader, "many")
	require.Equal(t, 400, r.Status, string(r.Raw))
	require.Contains(t, string(r.Raw), wire.MaxPendingJobsHeader)
	r = b.call("POST", "/api/v1/enqueue", one)
	require.Equal(t, 201, r.Status, "no header, no limit: %s", r.Raw)
	r = b.call("GET", "/api/v1/queues/lim", nil)
	require.EqualValues(t, 4, r.Body["counts"].(map[string]any)["pending"])
}

// A queue's key_concurrency is put and read back with its configuration,
// and jobs show their keys.
func TestKeyConcurrencyAndKeysOverHTTP(t *testing.T) {
	t.Parallel()
	b := setup(t)
	r := b.call("PUT", "/api/v1/queues/k", map[string]any{"key_concurrency": map[string]any{"max": 3}})
	require.Equal(t, 200, r.Status, string(r.Raw))
	require.Equal(t, map[string]any{"max": 3.0}, r.Body["key_concurrency"])
	for _, bad := range []any{0, 10001, "2", 1.5} {
		r = b.call("PUT", "/api/v1/queues/k", map[string]any{"key_concurrency": map[string]any{"max": bad}})
		require.Equal(t, 400, r.Status, "%v: %s", bad, r.Raw)
		require.Contains(t, string(r.Raw), "key_concurrency.max")
	}
	r = b.call("GET", "/api/v1/queues", nil)
	require.Contains(t, string(r.Raw), `"key_concurrency":{"max":3}`)

	r = b.call("POST", "/api/v1/enqueue", map[string]any{"queue": "k", "concurrency_key": "acct-1", "fairness_key": "cust-9"})
	require.Equal(t, 201, r.Status, string(r.Raw))
	id := r.Body["job_id"].(string)
	j := b.job(id)
	require.Equal(t, "acct-1", j["concurrency_key"])
	require.Equal(t, "cust-9", j["fairness_key"])
	long := make([]byte, wire.MaxFairnessKey+1)
	for i := range long {
		long[i] = 'x'
	}
	for field, v := range map[string]string{"fairness_key": string(long), "concurrency_key": "tab\there"} {
		r = b.call("POST", "/api/v1/enqueue/batch", map[string]any{"jobs": []any{map[string]any{"queue": "k", field: v}}})
		require.Equal(t, 400, r.Status, string(r.Raw))
		require.Contains(t, string(r.Raw), "jobs[0]."+field)
	}
	r = b.call("POST", "/api/v1/jobs/search", map[string]any{"concurrency_key": "acct-1"})
	require.Equal(t, 200, r.Status, string(r.Raw))
	require.EqualValues(t, 1, len(r.Body["jobs"].([]any)))
	r = b.call("POST", "/api/v1/jobs/search", map[string]any{"fairness_key": "nobody"})
	require.Empty(t, r.Body["jobs"])
}

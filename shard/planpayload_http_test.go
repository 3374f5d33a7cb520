package shard

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/wire"
)

// The plan's max_payload_bytes, as the gateway sends it, bounds every
// value a request stores, not only an enqueue's payload: a batch's job,
// chain steps and handlers, the chain as a whole, a batch callback, a
// schedule's payload (every job it fires), tags, a result, an ack/batch
// result, progress and a checkpoint. Each over it is a 413 naming its
// field and nothing is stored; at the limit it passes, and a request
// without the header keeps the protocol's limits only.
func TestPlanPayloadLimitOnEveryField(t *testing.T) {
	t.Parallel()
	b := setup(t)
	const limit = 100
	plan := []string{wire.MaxPayloadBytesHeader, "100"}
	big := strings.Repeat("x", limit) // its JSON string is limit+2 bytes
	step := func(p any) map[string]any { return map[string]any{"queue": "pl2", "payload": p} }

	refused := []struct {
		method, path, field string
		body                any
	}{
		{"POST", "/api/v1/enqueue", "payload", map[string]any{"queue": "pl", "payload": big}},
		{"POST", "/api/v1/enqueue/batch", "jobs[1].payload", map[string]any{"jobs": []any{step(1), step(big)}}},
		{"POST", "/api/v1/enqueue", "chain.steps[1].payload", map[string]any{"queue": "pl", "chain": map[string]any{
			"steps": []any{map[string]any{}, step(big)}}}},
		{"POST", "/api/v1/enqueue", "chain.on_failure.payload", map[string]any{"queue": "pl", "chain": map[string]any{
			"steps": []any{map[string]any{}}, "on_failure": step(big)}}},
		{"POST", "/api/v1/enqueue", "chain.on_exit.payload", map[string]any{"queue": "pl", "chain": map[string]any{
			"steps": []any{map[string]any{}}, "on_exit": step(big)}}},
		// Each step under the limit, the definition over it.
		{"POST", "/api/v1/enqueue", "chain.steps", map[string]any{"queue": "pl", "chain": map[string]any{
			"steps": []any{map[string]any{}, step(strings.Repeat("a", 40)), step(strings.Repeat("b", 40))}}}},
		{"POST", "/api/v1/enqueue/batch", "batch.callback_payload", map[string]any{"jobs": []any{step(1)},
			"batch": map[string]any{"callback_queue": "cb", "callback_payload": big}}},
		{"POST", "/api/v1/enqueue", "tags", map[string]any{"queue": "pl", "tags": map[string]any{
			"a": strings.Repeat("v", 60), "b": strings.Repeat("w", 60)}}},
		{"POST", "/api/v1/enqueue/batch", "jobs[0].tags", map[string]any{"jobs": []any{map[string]any{"queue": "pl",
			"tags": map[string]any{"k": strings.Repeat("v", limit)}}}}},
		{"POST", "/api/v1/schedules", "payload", map[string]any{"name": "big", "queue": "pl", "cron": "@hourly", "payload": big}},
	}
	for _, c := range refused {
		r := b.call(c.method, c.path, c.body, plan...)
		require.Equal(t, 413, r.Status, "%s %s: %s", c.method, c.path, r.Raw)
		require.Equal(t, "payload_too_large", errCode(r), "%s", r.Raw)
		require.Equal(t, c.field, errField(r), "%s", r.Raw)
		require.Contains(t, string(r.Raw), "max_payload_bytes limit of 100")
	}
	r := b.call("GET", "/api/v1/schedules", nil)
	require.Equal(t, 200, r.Status, string(r.Raw))
	require.Empty(t, r.Body["schedules"], "a refused schedule was stored")
	r = b.call("POST", "/api/v1/jobs/search", map[string]any{})
	require.Equal(t, 200, r.Status, string(r.Raw))
	require.Empty(t, r.Body["jobs"], "a refused enqueue stored a job")

	// At the limit: a payload whose JSON is 100 bytes.
	exact := strings.Repeat("x", limit-2)
	r = b.call("POST", "/api/v1/schedules", map[string]any{"name": "ok", "queue": "pl", "cron": "@hourly", "payload": exact}, plan...)
	require.Equal(t, 201, r.Status, string(r.Raw))
	r = b.call("PUT", "/api/v1/schedules/ok", map[string]any{"name": "ok", "queue": "pl", "cron": "@hourly", "payload": big}, plan...)
	require.Equal(t, 413, r.Status, "a replace is checked as a create: %s", r.Raw)
	require.Equal(t, "payload", errField(r))
	for range 2 {
		r = b.call("POST", "/api/v1/enqueue", map[string]any{"queue": "pl", "payload": exact}, plan...)
		require.Equal(t, 201, r.Status, string(r.Raw))
	}

	// What a worker stores while it holds the job.
	r = b.call("POST", "/api/v1/fetch/batch", map[string]any{"queues": []string{"pl"}, "worker_id": "w1", "max": 2, "timeout": 0}, plan...)
	require.Equal(t, 200, r.Status, string(r.Raw))
	jobs := r.Body["jobs"].([]any)
	require.Len(t, jobs, 2)
	id := jobs[0].(map[string]any)["job_id"].(string)
	id2 := jobs[1].(map[string]any)["job_id"].(string)
	for _, c := range []struct {
		path, field string
		body        any
	}{
		{"/api/v1/ack/" + id, "result", map[string]any{"worker_id": "w1", "result": big}},
		{"/api/v1/ack/batch", "acks[0].result", map[string]any{"worker_id": "w1", "acks": []any{map[string]any{"job_id": id, "result": big}}}},
		{"/api/v1/heartbeat", "checkpoint", map[string]any{"worker_id": "w1", "jobs": map[string]any{id: map[string]any{"checkpoint": big}}}},
		{"/api/v1/heartbeat", "progress", map[string]any{"worker_id": "w1", "jobs": map[string]any{id: map[string]any{"progress": big}}}},
	} {
		r = b.call("POST", c.path, c.body, plan...)
		require.Equal(t, 413, r.Status, "%s: %s", c.path, r.Raw)
		require.Equal(t, c.field, errField(r), "%s", r.Raw)
	}
	j := b.job(id)
	require.Equal(t, "active", j["state"], "a refused ack completed the job")
	require.Nil(t, j["checkpoint"])
	require.Nil(t, j["progress"])

	// Under the limit the worker's values pass; without the header the
	// protocol's limits alone apply.
	r = b.call("POST", "/api/v1/heartbeat", map[string]any{"worker_id": "w1", "jobs": map[string]any{id: map[string]any{"checkpoint": exact}}}, plan...)
	require.Equal(t, 200, r.Status, string(r.Raw))
	r = b.call("POST", "/api/v1/ack/"+id, map[string]any{"worker_id": "w1", "result": exact}, plan...)
	require.Equal(t, 200, r.Status, string(r.Raw))
	r = b.call("POST", "/api/v1/ack/"+id2, map[string]any{"worker_id": "w1", "result": big})
	require.Equal(t, 200, r.Status, "no plan header: %s", r.Raw)

	r = b.call("POST", "/api/v1/enqueue", map[string]any{"queue": "pl"}, wire.MaxPayloadBytesHeader, "lots")
	require.Equal(t, 400, r.Status, string(r.Raw))
	require.Contains(t, string(r.Raw), wire.MaxPayloadBytesHeader)
}

// A fetch/batch leases no more jobs than the plan's monthly executions
// cap still allows, as the gateway sends it, whatever max asks for, and
// its answer says how many it leased (for the gateway's count).
func TestFetchBatchClampedToExecutionsLeft(t *testing.T) {
	t.Parallel()
	b := setup(t)
	jobs := make([]any, 10)
	for i := range jobs {
		jobs[i] = map[string]any{"queue": "ex"}
	}
	r := b.call("POST", "/api/v1/enqueue/batch", map[string]any{"jobs": jobs})
	require.Equal(t, 201, r.Status, string(r.Raw))
	fetch := map[string]any{"queues": []string{"ex"}, "worker_id": "w1", "max": 10, "timeout": 0}
	r = b.call("POST", "/api/v1/fetch/batch", fetch, wire.ExecutionsLeftHeader, "3")
	require.Equal(t, 200, r.Status, string(r.Raw))
	require.Len(t, r.Body["jobs"], 3)
	require.Equal(t, "3", r.Header.Get(wire.LeasedHeader), "the answer says how many it leased")
	r = b.call("GET", "/api/v1/queues/ex", nil)
	require.EqualValues(t, 7, r.Body["counts"].(map[string]any)["pending"], "the rest stay pending")
	r = b.call("POST", "/api/v1/fetch/batch", fetch)
	require.Equal(t, 200, r.Status, string(r.Raw))
	require.Len(t, r.Body["jobs"], 7, "no header, no cap")
	r = b.call("POST", "/api/v1/fetch/batch", fetch)
	require.Equal(t, 200, r.Status, string(r.Raw))
	require.Empty(t, r.Header.Values(wire.LeasedHeader), "nothing leased")
	r = b.call("POST", "/api/v1/fetch/batch", fetch, wire.ExecutionsLeftHeader, "0")
	require.Equal(t, 400, r.Status, string(r.Raw))
}

package shard

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/shard/service"
	"github.com/jobbie/jobbie/wire"
)

func TestFlowsHTTPErrors(t *testing.T) {
	t.Parallel()
	b := setup(t)
	id := b.enqueue(map[string]any{"queue": "q"})
	steps := func(n int) []any {
		out := make([]any, n)
		for i := range out {
			out[i] = map[string]any{"queue": "q"}
		}
		return out
	}
	many := make([]string, wire.MaxDependsOn+1)
	for i := range many {
		many[i] = id
	}
	jobs := []any{map[string]any{"queue": "q"}}
	for _, tc := range []struct {
		path        string
		body        any
		status      int
		code, field string
	}{
		{"/api/v1/enqueue/batch", map[string]any{"jobs": jobs, "batch": map[string]any{}}, 400, "bad_request", "batch.callback_queue"},
		{"/api/v1/enqueue/batch", map[string]any{"jobs": jobs, "batch": map[string]any{"callback_queue": "bad queue"}}, 400, "bad_request", "batch.callback_queue"},
		{"/api/v1/enqueue/batch", map[string]any{"jobs": jobs, "batch": map[string]any{"callback_queue": "c", "x": 1}}, 400, "bad_request", "x"},
		{"/api/v1/enqueue", map[string]any{"queue": "q", "chain": map[string]any{"steps": []any{}}}, 400, "bad_request", "chain.steps"},
		{"/api/v1/enqueue", map[string]any{"queue": "q", "chain": map[string]any{"steps": steps(wire.MaxChainSteps + 1)}}, 400, "bad_request", "chain.steps"},
		{"/api/v1/enqueue", map[string]any{"queue": "q", "chain": map[string]any{"steps": []any{map[string]any{"queue": "other"}}}}, 400, "bad_request", "chain.steps[0].queue"},
		{"/api/v1/enqueue", map[string]any{"queue": "q", "chain": map[string]any{"steps": []any{map[string]any{"queue": "q"}, map[string]any{}}}}, 400, "bad_request", "chain.steps[1].queue"},
		{"/api/v1/enqueue", map[string]any{"queue": "q", "chain": map[string]any{"steps": steps(2), "on_failure": map[string]any{"queue": "bad queue"}}}, 400, "bad_request", "chain.on_failure.queue"},
		{"/api/v1/enqueue", map[string]any{"queue": "q", "chain": map[string]any{"steps": steps(2), "then": 1}}, 400, "bad_request", "then"},
		{"/api/v1/enqueue", map[string]any{"queue": "q", "depends_on": []string{unknownJob}}, 400, "bad_request", "depends_on"},
		{"/api/v1/enqueue", map[string]any{"queue": "q", "depends_on": []string{"nope"}}, 400, "bad_request", "depends_on"},
		{"/api/v1/enqueue", map[string]any{"queue": "q", "depends_on": many}, 400, "bad_request", "depends_on"},
		{"/api/v1/enqueue", map[string]any{"queue": "q", "depends_on": []string{id}, "on_dependency_failure": "maybe"}, 400, "bad_request", "on_dependency_failure"},
		{"/api/v1/enqueue", map[string]any{"queue": "q", "on_dependency_failure": "run"}, 400, "bad_request", "on_dependency_failure"},
		{"/api/v1/enqueue/batch", map[string]any{"jobs": []any{map[string]any{"queue": "q"}, map[string]any{"queue": "q", "depends_on": []string{unknownJob}}}}, 400, "bad_request", "depends_on"},
		{"/api/v1/ack/" + id, map[string]any{"step_status": "stop"}, 400, "bad_request", "step_status"},
		{"/api/v1/ack/batch", map[string]any{"acks": []any{map[string]any{"job_id": id, "step_status": "stop"}}}, 400, "bad_request", "acks[0].step_status"},
	} {
		r := b.call("POST", tc.path, tc.body)
		require.Equal(t, tc.status, r.Status, "%s %v: %s", tc.path, tc.body, r.Raw)
		require.Equal(t, tc.code, errCode(r), string(r.Raw))
		require.Equal(t, tc.field, errField(r), string(r.Raw))
	}
	for _, path := range []string{"/api/v1/batches/batch_01HX0000000000000000000000", "/api/v1/batches/nope", "/api/v1/batches/" + id} {
		r := b.call("GET", path, nil)
		require.Equal(t, 404, r.Status, path)
		require.Equal(t, "not_found", errCode(r))
	}
	r := b.call("GET", "/api/v1/batches/batch_01HX0000000000000000000000", nil, wire.ShardNamespaceHeader, "")
	require.Equal(t, 400, r.Status)
}

func TestBatchChainAndDependencyOverHTTP(t *testing.T) {
	t.Parallel()
	b := setup(t)
	r := b.call("POST", "/api/v1/enqueue/batch", map[string]any{
		"jobs":  []any{map[string]any{"queue": "w", "payload": 1}, map[string]any{"queue": "w", "payload": 2}},
		"batch": map[string]any{"callback_queue": "done", "callback_payload": map[string]any{"campaign": "c1"}},
	})
	require.Equal(t, 201, r.Status, string(r.Raw))
	batchID := r.Body["batch_id"].(string)
	require.Len(t, batchID, service.BatchIDLen)
	ids := r.Body["job_ids"].([]any)
	require.Equal(t, batchID, b.job(ids[0].(string))["batch_id"])
	v := b.call("GET", "/api/v1/batches/"+batchID, nil)
	require.Equal(t, 200, v.Status)
	require.EqualValues(t, 2, v.Body["pending"])
	require.Nil(t, v.Body["callback_job_id"])
	require.Nil(t, v.Body["completed_at"])

	// The second job depends on the first batch member; its chain has two steps.
	dep := b.enqueue(map[string]any{"queue": "c1", "depends_on": []any{ids[0]},
		"chain": map[string]any{"steps": []any{map[string]any{"queue": "c1"}, map[string]any{"queue": "c2"}}}})
	d := b.job(dep)
	require.Equal(t, "held", d["state"])
	require.Equal(t, []any{ids[0]}, d["depends_on"])
	require.EqualValues(t, 0, d["chain_step"])

	for range ids {
		f := b.fetch([]string{"w"}, nil)
		require.Equal(t, 200, f.Status)
		require.Equal(t, 200, b.call("POST", "/api/v1/ack/"+f.Body["job_id"].(string), map[string]any{"result": f.Body["payload"]}).Status)
	}
	v = b.call("GET", "/api/v1/batches/"+batchID, nil)
	require.EqualValues(t, 0, v.Body["pending"])
	require.EqualValues(t, 2, v.Body["succeeded"])
	cb := b.fetch([]string{"done"}, nil)
	require.Equal(t, v.Body["callback_job_id"], cb.Body["job_id"])
	require.Equal(t, "pending", b.job(dep)["state"])

	f := b.fetch([]string{"c1"}, nil)
	require.Equal(t, dep, f.Body["job_id"])
	r = b.call("POST", "/api/v1/ack/batch", map[string]any{"acks": []any{map[string]any{"job_id": dep, "result": "r1", "step_status": "continue"}}})
	require.Equal(t, 200, r.Status, string(r.Raw))
	s2 := b.fetch([]string{"c2"}, nil)
	require.Equal(t, 200, s2.Status)
	require.JSONEq(t, `{"previous_result":"r1","payload":null}`, string(mustJSON(s2.Body["payload"])))
	d2 := b.job(s2.Body["job_id"].(string))
	require.Equal(t, d["chain_id"], d2["chain_id"])
	require.EqualValues(t, 1, d2["chain_step"])
}

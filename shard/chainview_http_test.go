package shard

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/wire"
)

// chainSteps is the steps of a GET /api/v1/jobs/{id}/chain answer.
func chainSteps(t *testing.T, r resp) []map[string]any {
	t.Helper()
	require.Equal(t, 200, r.Status, string(r.Raw))
	var out []map[string]any
	for _, s := range r.Body["steps"].([]any) {
		out = append(out, s.(map[string]any))
	}
	return out
}

// A chain step's job shows its chain: every step of the definition in
// order, with the job running it and its state once there is one, from
// any step's job; a limited scope sees it only if the whole chain is in
// it; another namespace, a job of no chain and a malformed id are 404.
func TestChainView(t *testing.T) {
	t.Parallel()
	b := setup(t)
	first := b.enqueue(map[string]any{"queue": "etl.extract", "chain": map[string]any{
		"steps":      []any{map[string]any{"queue": "etl.extract"}, map[string]any{"queue": "etl.load"}, map[string]any{"queue": "etl.report"}},
		"on_failure": map[string]any{"queue": "etl.alerts"}}})

	v := b.call("GET", "/api/v1/jobs/"+first+"/chain", nil)
	steps := chainSteps(t, v)
	require.Len(t, steps, 3)
	require.Equal(t, b.job(first)["chain_id"], v.Body["chain_id"])
	require.EqualValues(t, 0, v.Body["step"])
	require.Equal(t, "etl.alerts", v.Body["on_failure_queue"])
	require.Nil(t, v.Body["on_exit_queue"])
	require.Equal(t, first, steps[0]["job_id"])
	require.Equal(t, "pending", steps[0]["state"])
	for i, q := range []string{"etl.extract", "etl.load", "etl.report"} {
		require.EqualValues(t, i, steps[i]["step"])
		require.Equal(t, q, steps[i]["queue"])
	}
	require.Nil(t, steps[1]["job_id"], "not reached yet")
	require.Nil(t, steps[1]["state"])

	// Step 0 completes: step 1 is enqueued and shown from either job.
	f := b.fetch([]string{"etl.extract"}, nil)
	require.Equal(t, first, f.Body["job_id"])
	require.Equal(t, 200, b.call("POST", "/api/v1/ack/"+first, map[string]any{"result": map[string]int{"rows": 3}}).Status)
	steps = chainSteps(t, b.call("GET", "/api/v1/jobs/"+first+"/chain", nil))
	require.Equal(t, "completed", steps[0]["state"])
	require.NotNil(t, steps[0]["completed_at"])
	second, ok := steps[1]["job_id"].(string)
	require.True(t, ok, "step 1 has its job: %v", steps[1])
	require.Equal(t, "pending", steps[1]["state"])
	require.Equal(t, "etl.load", steps[1]["job_queue"])
	from2 := b.call("GET", "/api/v1/jobs/"+second+"/chain", nil)
	require.EqualValues(t, 1, from2.Body["step"])
	require.Equal(t, steps, chainSteps(t, from2), "the same chain from its second step")
	require.Nil(t, steps[2]["job_id"])

	// Scope: the whole chain, handlers included, must be in it.
	require.Equal(t, 200, b.withScope("etl.*").call("GET", "/api/v1/jobs/"+second+"/chain", nil).Status)
	for _, sc := range []string{"etl.load", "etl.extract"} {
		r := b.withScope(sc).call("GET", "/api/v1/jobs/"+second+"/chain", nil)
		require.Equal(t, 404, r.Status, sc+": "+string(r.Raw))
		require.Equal(t, "job "+second+" not found", errMessage(r), sc)
	}

	// Not a chain, another namespace, no such job, not a job id.
	plain := b.enqueue(map[string]any{"queue": "etl.extract"})
	r := b.call("GET", "/api/v1/jobs/"+plain+"/chain", nil)
	require.Equal(t, 404, r.Status, string(r.Raw))
	require.Equal(t, "job "+plain+" is not a step of a chain", errMessage(r))
	other := b.call("GET", "/api/v1/jobs/"+first+"/chain", nil, wire.ShardNamespaceHeader, otherNS)
	require.Equal(t, 404, other.Status)
	require.Equal(t, "job "+first+" not found", errMessage(other))
	require.Equal(t, 404, b.call("GET", "/api/v1/jobs/"+missingJob+"/chain", nil).Status)
	require.Equal(t, 404, b.call("GET", "/api/v1/jobs/nope/chain", nil).Status)

	// Deleting a step's job takes it out of the index: the step shows no job.
	require.Equal(t, 204, b.call("DELETE", "/api/v1/jobs/"+second, nil).Status)
	steps = chainSteps(t, b.call("GET", "/api/v1/jobs/"+first+"/chain", nil))
	require.Nil(t, steps[1]["job_id"])
	require.Equal(t, "completed", steps[0]["state"])
}

// A backup carries a chain's index: restored into a new namespace, the
// chain shows its steps' jobs there as it did at the source.
func TestChainViewSurvivesBackupAndRestore(t *testing.T) {
	t.Parallel()
	b := setup(t)
	src := b.in(testNS)
	first := src.ok("POST", "/api/v1/enqueue", map[string]any{"queue": "a", "chain": map[string]any{
		"steps": []any{map[string]any{"queue": "a"}, map[string]any{"queue": "b"}}}}, 201).Body["job_id"].(string)
	src.ok("POST", "/api/v1/fetch", map[string]any{"queues": []string{"a"}, "worker_id": "w", "timeout": 0}, 200)
	src.ok("POST", "/api/v1/ack/"+first, nil, 200)
	want := chainSteps(t, src.ok("GET", "/api/v1/jobs/"+first+"/chain", nil, 200))
	require.NotNil(t, want[1]["job_id"])

	r := b.restoreInto(restoredNS, wire.RestoreNew, b.backupOf(testNS))
	require.Equal(t, 200, r.Status, string(r.Raw))
	dst := b.in(restoredNS)
	require.Equal(t, want, chainSteps(t, dst.ok("GET", "/api/v1/jobs/"+want[1]["job_id"].(string)+"/chain", nil, 200)))
}

package shard

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// Deleting a queue removes its dead jobs from the dead listing too: every
// key that names a job goes with it.
func TestQueueDeleteLeavesNoDeadEntries(t *testing.T) {
	t.Parallel()
	b := setup(t)
	id := b.enqueue(map[string]any{"queue": "doomed", "max_retries": 0})
	require.Equal(t, id, b.fetch([]string{"doomed"}, nil).Body["job_id"])
	require.Equal(t, 200, b.call("POST", "/api/v1/fail/"+id, map[string]string{"error": "x"}).Status)
	r := b.call("GET", "/api/v1/dead?queue=doomed", nil)
	require.Len(t, r.Body["jobs"], 1)

	require.Equal(t, 200, b.call("DELETE", "/api/v1/queues/doomed?confirm=true", nil).Status)
	r = b.call("GET", "/api/v1/dead", nil)
	require.Equal(t, 200, r.Status, string(r.Raw))
	require.Empty(t, r.Body["jobs"])
}

// A base delay above the built-in max is fine when the max comes from the
// queue's defaults; only a pair the producer sent is checked.
func TestBaseDelayChecksOnlyAnExplicitPair(t *testing.T) {
	t.Parallel()
	b := setup(t)
	require.Equal(t, 200, b.call("POST", "/api/v1/queues/slow/defaults", map[string]any{"retry_max_delay": "2h"}).Status)
	id := b.enqueue(map[string]any{"queue": "slow", "retry_base_delay": "20m"})
	require.Equal(t, "2h", b.job(id)["retry_max_delay"])
	r := b.call("POST", "/api/v1/enqueue", map[string]any{"queue": "slow", "retry_base_delay": "20m", "retry_max_delay": "10m"})
	require.Equal(t, 400, r.Status)
	require.Equal(t, "retry_max_delay", errField(r))
}

// Held jobs (waiting on dependencies) show in the queue's counts.
func TestQueueCountsShowHeldJobs(t *testing.T) {
	t.Parallel()
	b := setup(t)
	dep := b.enqueue(map[string]any{"queue": "first"})
	r := b.call("POST", "/api/v1/enqueue", map[string]any{"queue": "after", "depends_on": []string{dep}})
	require.Equal(t, 201, r.Status, string(r.Raw))
	require.Equal(t, "held", r.Body["status"])
	require.EqualValues(t, 1, b.queueView("after")["counts"].(map[string]any)["held"])
}

package shard

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// POST /schedules/{id}/run enqueues the schedule's job now, as a run
// would, without moving the schedule's own runs; a disabled schedule runs
// by hand too; its unique key holds; an unknown one is 404 and nothing is
// enqueued.
func TestScheduleRunByHand(t *testing.T) {
	t.Parallel()
	b := setup(t)
	require.Equal(t, 200, b.call("PUT", "/api/v1/queues/reports", map[string]any{"defaults": map[string]any{"max_retries": 7}}).Status)
	s := b.createSchedule(map[string]any{"name": "nightly", "queue": "reports", "cron": "0 2 * * *",
		"payload": map[string]any{"kind": "nightly"}, "priority": "high", "unique_key": "nightly-report"})
	id := s["id"].(string)

	before := time.Now()
	r := b.call("POST", "/api/v1/schedules/nightly/run", nil)
	require.Equal(t, 201, r.Status, string(r.Raw))
	jobID := r.Body["job_id"].(string)
	require.Equal(t, "pending", r.Body["status"])

	j := b.call("GET", "/api/v1/jobs/"+jobID, nil)
	require.Equal(t, 200, j.Status, string(j.Raw))
	require.Equal(t, "reports", j.Body["queue"])
	require.Equal(t, map[string]any{"kind": "nightly"}, j.Body["payload"])
	require.Equal(t, "high", j.Body["priority"])
	require.Equal(t, float64(7), j.Body["max_retries"], "left out by the schedule: the queue's default")
	tags := j.Body["tags"].(map[string]any)
	require.Equal(t, id, tags["jobbie.schedule_id"])
	at, err := time.Parse(time.RFC3339Nano, tags["jobbie.run_at"].(string))
	require.NoError(t, err)
	require.WithinDuration(t, before, at, 5*time.Second)

	after := b.call("GET", "/api/v1/schedules/"+id, nil)
	require.Equal(t, s["next_run"], after.Body["next_run"], "its own runs do not move")
	require.Nil(t, after.Body["last_run"])

	// The unique key holds: the job still unfinished is the answer.
	again := b.call("POST", "/api/v1/schedules/"+id+"/run", nil)
	require.Equal(t, 201, again.Status, string(again.Raw))
	require.Equal(t, jobID, again.Body["job_id"])
	require.Equal(t, true, again.Body["unique_existing"])

	require.Equal(t, 200, b.call("POST", "/api/v1/schedules/"+id+"/disable", nil).Status)
	done := b.call("POST", "/api/v1/ack/"+b.fetch([]string{"reports"}, nil).Body["job_id"].(string), map[string]any{})
	require.Equal(t, 200, done.Status, string(done.Raw))
	r = b.call("POST", "/api/v1/schedules/"+id+"/run", nil)
	require.Equal(t, 201, r.Status, "a disabled schedule runs by hand: %s", r.Raw)
	require.NotEqual(t, jobID, r.Body["job_id"])

	missing := b.call("POST", "/api/v1/schedules/sch_01hx0000000000000000000000/run", nil)
	require.Equal(t, 404, missing.Status, string(missing.Raw))
}

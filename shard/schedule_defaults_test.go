package shard

import (
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/require"
)

// A schedule that leaves max_retries out follows its queue's default, as
// an enqueue that leaves it out does, and the jobs it fires take the
// queue's defaults for every field a schedule cannot set (backoff, delays,
// expire_after); one that sets max_retries keeps it.
func TestScheduleJobsTakeQueueDefaults(t *testing.T) {
	t.Parallel()
	clock := clockwork.NewFakeClockAt(time.Now())
	b := setup(t, withClock(clock))
	r := b.call("POST", "/api/v1/queues/mail/defaults", map[string]any{"max_retries": 9, "retry_backoff": "linear",
		"retry_base_delay": "7s", "expire_after": "2h"})
	require.Equal(t, 200, r.Status, string(r.Raw))

	left := b.createSchedule(map[string]any{"name": "left", "queue": "mail", "cron": "@every 1s"})
	require.EqualValues(t, 9, left["max_retries"], "the queue's default shows")
	require.Equal(t, true, left["max_retries_default"])
	set := b.createSchedule(map[string]any{"name": "set", "queue": "mail", "cron": "@every 1s", "max_retries": 2})
	require.EqualValues(t, 2, set["max_retries"])
	require.Equal(t, false, set["max_retries_default"])
	r = b.call("PUT", "/api/v1/schedules/set", map[string]any{"name": "set", "queue": "mail", "cron": "@every 1s"})
	require.Equal(t, 200, r.Status, string(r.Raw))
	require.EqualValues(t, 9, r.Body["max_retries"], "a replace that leaves it out goes back to the queue's")
	require.Equal(t, true, r.Body["max_retries_default"])
	r = b.call("PUT", "/api/v1/schedules/set", map[string]any{"name": "set", "queue": "mail", "cron": "@every 1s", "max_retries": 2})
	require.Equal(t, 200, r.Status, string(r.Raw))

	b.tick(clock, time.Second, left["id"].(string))
	eventually(t, 5*time.Second, func() bool { return b.lastRun(set["id"].(string)) != "" }, "both fired")
	for name, retries := range map[string]float64{"left": 9, "set": 2} {
		r = b.call("GET", "/api/v1/schedules/"+name, nil)
		require.Equal(t, 200, r.Status, string(r.Raw))
		j := b.job(r.Body["last_job_id"].(string))
		require.Equal(t, retries, j["max_retries"], name)
		require.Equal(t, "linear", j["retry_backoff"], name)
		require.Equal(t, "7s", j["retry_base_delay"], name)
		require.Equal(t, "2h", j["expire_after"], name)
	}
}

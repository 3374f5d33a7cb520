package shard

import (
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/wire"
)

// Deleting a job others wait on settles them: its dependents are
// cancelled (or run, under on_dependency_failure "run") and its batch
// counts it failed, so the callback still comes.
func TestDeleteSettlesWhatWaits(t *testing.T) {
	t.Parallel()
	b := setup(t)
	dep := b.enqueue(map[string]any{"queue": "a"})
	cancelled := b.enqueue(map[string]any{"queue": "d", "depends_on": []string{dep}})
	runs := b.enqueue(map[string]any{"queue": "d", "depends_on": []string{dep}, "on_dependency_failure": "run"})
	require.Equal(t, 204, b.call("DELETE", "/api/v1/jobs/"+dep, nil).Status)
	d := b.job(cancelled)
	require.Equal(t, "cancelled", d["state"])
	require.Equal(t, "dependency_failed", d["cancel_reason"])
	require.Equal(t, "pending", b.job(runs)["state"])

	r := b.call("POST", "/api/v1/enqueue/batch", map[string]any{"jobs": []any{map[string]any{"queue": "m"}, map[string]any{"queue": "m"}},
		"batch": map[string]any{"callback_queue": "done"}})
	require.Equal(t, 201, r.Status, string(r.Raw))
	batch, ids := r.Body["batch_id"].(string), r.Body["job_ids"].([]any)
	require.Equal(t, 204, b.call("DELETE", "/api/v1/jobs/"+ids[0].(string), nil).Status)
	v := b.call("GET", "/api/v1/batches/"+batch, nil).Body
	require.EqualValues(t, 1, v["failed"])
	require.EqualValues(t, 1, v["pending"])
	require.Equal(t, 200, b.fetch([]string{"m"}, nil).Status)
	require.Equal(t, 200, b.call("POST", "/api/v1/ack/"+ids[1].(string), nil).Status)
	cb := b.fetch([]string{"done"}, nil)
	require.Equal(t, 200, cb.Status, "the callback comes")
	require.Equal(t, []any{ids[0]}, cb.Body["payload"].(map[string]any)["failed_ids"])
}

func TestClearTakesRetryingJobs(t *testing.T) {
	t.Parallel()
	b := setup(t)
	retrying := b.enqueue(map[string]any{"queue": "q", "retry_base_delay": "1h", "retry_backoff": "fixed"})
	require.Equal(t, 200, b.fetch([]string{"q"}, nil).Status)
	require.Equal(t, "retrying", b.call("POST", "/api/v1/fail/"+retrying, map[string]any{"error": "x"}).Body["status"])
	active := b.enqueue(map[string]any{"queue": "q"})
	require.Equal(t, 200, b.fetch([]string{"q"}, nil).Status)
	b.enqueue(map[string]any{"queue": "q"})
	b.enqueue(map[string]any{"queue": "q", "scheduled_at": time.Now().Add(time.Hour).UTC().Format(time.RFC3339)})
	r := b.call("POST", "/api/v1/queues/q/clear", nil)
	require.Equal(t, 200, r.Status, string(r.Raw))
	require.EqualValues(t, 3, r.Body["cleared"], "pending, scheduled and retrying")
	require.Equal(t, 404, b.call("GET", "/api/v1/jobs/"+retrying, nil).Status)
	require.Equal(t, "active", b.job(active)["state"])
}

// Background bulk operations are listed newest first, page by page; they
// and finished batches are pruned once the retention period passed.
func TestBulkListAndRecordRetention(t *testing.T) {
	t.Parallel()
	// The shard's clock, not the machine's: the listing below must see both
	// records, however long a loaded machine takes to get there.
	clock := clockwork.NewFakeClockAt(time.Now())
	b := setup(t, withClock(clock), func(c *Config) { c.BulkSyncMax, c.Retention = 2, time.Hour })
	var ops []string
	for i := range 2 {
		q := []string{"q0", "q1"}[i]
		for range 3 {
			b.enqueue(map[string]any{"queue": q})
		}
		ops = append(ops, b.startBulkOp(testNS, q))
		eventually(t, 5*time.Second, func() bool { return b.bulkOp(testNS, ops[len(ops)-1])["status"] != "processing" }, "the operation ends")
	}
	r := b.call("POST", "/api/v1/enqueue/batch", map[string]any{"jobs": []any{map[string]any{"queue": "m"}}, "batch": map[string]any{"callback_queue": "done"}})
	require.Equal(t, 201, r.Status, string(r.Raw))
	batch := r.Body["batch_id"].(string)
	require.Equal(t, 200, b.fetch([]string{"m"}, nil).Status)
	require.Equal(t, 200, b.call("POST", "/api/v1/ack/"+r.Body["job_ids"].([]any)[0].(string), nil).Status)

	page := b.call("GET", "/api/v1/bulk?limit=1", nil)
	require.Equal(t, 200, page.Status, string(page.Raw))
	list := page.Body["operations"].([]any)
	require.Len(t, list, 1)
	require.Equal(t, ops[1], list[0].(map[string]any)["id"], "newest first")
	require.Equal(t, true, page.Body["has_more"])
	next := b.call("GET", "/api/v1/bulk?limit=1&cursor="+page.Body["cursor"].(string), nil)
	require.Equal(t, ops[0], next.Body["operations"].([]any)[0].(map[string]any)["id"])
	require.Equal(t, false, next.Body["has_more"])
	require.Nil(t, next.Body["cursor"])
	for _, q := range []string{"limit=0", "limit=1001", "limit=x", "cursor=%%%"} {
		bad := b.call("GET", "/api/v1/bulk?"+q, nil)
		require.Equal(t, 400, bad.Status, q)
	}
	other := b.call("GET", "/api/v1/bulk", nil, wire.ShardNamespaceHeader, otherNS)
	require.Empty(t, other.Body["operations"], "another namespace sees none")

	// Past the retention period once, then a sweep interval at a time: each
	// step lets the leader's sweep tick again. A step of hours made every
	// periodic duty of the leader due again at each tick (usage, history,
	// event trims), and on a loaded machine three such ticks took the 10 s
	// the test waits.
	clock.Advance(2 * time.Hour)
	eventually(t, 10*time.Second, func() bool {
		clock.Advance(20 * time.Millisecond)
		return b.call("GET", "/api/v1/bulk/"+ops[0], nil).Status == 404 && b.call("GET", "/api/v1/batches/"+batch, nil).Status == 404
	}, "finished records pruned after the retention period")
	require.Empty(t, b.call("GET", "/api/v1/bulk", nil).Body["operations"])
}

// A lost lease uses up an attempt: with max_retries 1 the second loss is
// the end, dead with lease_expired; the checkpoint is kept in between.
func TestLostLeasesUseUpAttempts(t *testing.T) {
	t.Parallel()
	clock := clockwork.NewFakeClockAt(time.Now())
	b := setup(t, withClock(clock))
	id := b.enqueue(map[string]any{"queue": "q", "max_retries": 1})
	for attempt := 1; attempt <= 2; attempt++ {
		f := b.fetch([]string{"q"}, map[string]any{"lease_duration": 1})
		require.Equal(t, 200, f.Status, string(f.Raw))
		require.EqualValues(t, attempt, f.Body["attempt"])
		if attempt == 1 {
			hb := b.call("POST", "/api/v1/heartbeat", map[string]any{"jobs": map[string]any{id: map[string]any{"checkpoint": map[string]int{"at": 3}}}})
			require.Equal(t, 200, hb.Status, string(hb.Raw))
		} else {
			require.Equal(t, map[string]any{"at": 3.0}, f.Body["checkpoint"])
		}
		want := "pending"
		if attempt == 2 {
			want = "dead"
		}
		eventually(t, 5*time.Second, func() bool {
			clock.Advance(2 * time.Second)
			return b.job(id)["state"] == want
		}, "the lease runs out: "+want)
	}
	d := b.job(id)
	require.Equal(t, "lease_expired", d["dead_reason"])
	errs := d["errors"].([]any)
	require.Len(t, errs, 2)
	for _, e := range errs {
		require.Equal(t, "lease_expired", e.(map[string]any)["error"])
	}
}

func TestChainStepsTakeTheirOwnOptions(t *testing.T) {
	t.Parallel()
	b := setup(t)
	first := b.enqueue(map[string]any{"queue": "s1", "priority": "high", "chain": map[string]any{"steps": []any{
		map[string]any{"queue": "s1"},
		map[string]any{"queue": "s2", "priority": "critical", "max_retries": 0, "lease_duration": "2s", "tags": map[string]string{"step": "2"}},
	}}})
	require.Equal(t, "high", b.job(first)["priority"])
	f := b.fetch([]string{"s1"}, nil)
	require.Equal(t, 200, b.call("POST", "/api/v1/ack/"+f.Body["job_id"].(string), nil).Status)
	s2 := b.fetch([]string{"s2"}, map[string]any{"lease_duration": nil})
	require.Equal(t, 200, s2.Status, string(s2.Raw))
	require.Equal(t, 2.0, s2.Body["lease_duration"], "the step's own lease")
	require.Equal(t, map[string]any{"step": "2"}, s2.Body["tags"])
	d := b.job(s2.Body["job_id"].(string))
	require.Equal(t, "critical", d["priority"])
	require.EqualValues(t, 0, d["max_retries"])
	require.Equal(t, "2s", d["lease_duration"])
}

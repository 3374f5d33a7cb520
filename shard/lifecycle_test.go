package shard

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestFullLifecycle(t *testing.T) {
	t.Parallel()
	b := setup(t)
	id := b.enqueue(map[string]any{"queue": "emails.send", "payload": map[string]any{"to": "a@example.com"}, "tags": map[string]string{"tenant": "acme"}})
	require.Equal(t, "pending", b.job(id)["state"])

	f := b.fetch([]string{"emails.send"}, map[string]any{"lease_duration": 30})
	require.Equal(t, 200, f.Status, string(f.Raw))
	require.Equal(t, id, f.Body["job_id"])
	require.Equal(t, float64(1), f.Body["attempt"])
	require.Equal(t, float64(30), f.Body["lease_duration"])
	require.Equal(t, map[string]any{"to": "a@example.com"}, f.Body["payload"])
	require.Equal(t, map[string]any{"tenant": "acme"}, f.Body["tags"])
	d := b.job(id)
	require.Equal(t, "active", d["state"])
	require.Equal(t, map[string]any{"id": "w1", "hostname": "host1"}, d["worker"])
	require.NotNil(t, d["lease_expires_at"])

	a := b.call("POST", "/api/v1/ack/"+id, map[string]any{"result": map[string]any{"sent": true}})
	require.Equal(t, 200, a.Status, string(a.Raw))
	d = b.job(id)
	require.Equal(t, "completed", d["state"])
	require.Equal(t, map[string]any{"sent": true}, d["result"])
	require.NotNil(t, d["completed_at"])

	// A second ack finds the job no longer active.
	a = b.call("POST", "/api/v1/ack/"+id, nil)
	require.Equal(t, 409, a.Status)
	require.Equal(t, "lease_mismatch", errCode(a))
}

func TestFetchReturns204WhenEmpty(t *testing.T) {
	t.Parallel()
	b := setup(t)
	r := b.fetch([]string{"nothing"}, map[string]any{"timeout": 0.2})
	require.Equal(t, 204, r.Status)
}

func TestPriorityThenFIFO(t *testing.T) {
	t.Parallel()
	b := setup(t)
	n1 := b.enqueue(map[string]any{"queue": "q", "priority": "normal"})
	h1 := b.enqueue(map[string]any{"queue": "q", "priority": "high"})
	n2 := b.enqueue(map[string]any{"queue": "q"})
	c1 := b.enqueue(map[string]any{"queue": "q", "priority": "critical"})
	h2 := b.enqueue(map[string]any{"queue": "q2", "priority": "high"})
	var got []string
	for i := 0; i < 5; i++ {
		r := b.fetch([]string{"q", "q2"}, nil)
		require.Equal(t, 200, r.Status)
		got = append(got, r.Body["job_id"].(string))
	}
	require.Equal(t, []string{c1, h1, h2, n1, n2}, got)
}

func TestLongPollIsWokenByEnqueue(t *testing.T) {
	t.Parallel()
	b := setup(t)
	done := make(chan resp, 1)
	go func() { done <- b.fetch([]string{"wake"}, map[string]any{"timeout": 10}) }()
	// Wait until the fetch is parked, then enqueue.
	eventually(t, 5*time.Second, func() bool {
		return b.srv.waiters.Parked(testNS, "wake") > 0
	}, "fetch parked")
	start := time.Now()
	id := b.enqueue(map[string]any{"queue": "wake"})
	r := <-done
	require.Equal(t, 200, r.Status)
	require.Equal(t, id, r.Body["job_id"])
	require.Less(t, time.Since(start), 2*time.Second)
}

func TestFailRetriesThenDies(t *testing.T) {
	t.Parallel()
	b := setup(t)
	id := b.enqueue(map[string]any{"queue": "r", "max_retries": 2, "retry_backoff": "fixed", "retry_base_delay": "500ms"})
	var early resp // a fetch made while checking the retry was not due
	for attempt := 1; attempt <= 3; attempt++ {
		f := early
		if f.Status != 200 {
			eventually(t, 5*time.Second, func() bool { f = b.fetch([]string{"r"}, nil); return f.Status == 200 }, "job due again")
		}
		require.Equal(t, float64(attempt), f.Body["attempt"])
		before := time.Now()
		fr := b.call("POST", "/api/v1/fail/"+id, map[string]any{"error": "boom", "backtrace": "at x:1"})
		after := time.Now()
		require.Equal(t, 200, fr.Status, string(fr.Raw))
		if attempt < 3 {
			require.Equal(t, "retrying", fr.Body["status"])
			require.Equal(t, float64(2-attempt), fr.Body["attempts_remaining"])
			next, err := time.Parse(time.RFC3339Nano, fr.Body["next_attempt_at"].(string))
			require.NoError(t, err)
			// Fixed 500ms plus at most 10% jitter after the failure was applied.
			require.False(t, next.Before(before.Add(500*time.Millisecond)), "retry scheduled too early")
			require.False(t, next.After(after.Add(550*time.Millisecond)), "retry scheduled too late")
			// Not due yet: nothing to fetch before next_attempt_at.
			early = b.fetch([]string{"r"}, nil)
			if early.Status == 200 {
				require.False(t, time.Now().Before(next), "retry delivered before next_attempt_at")
			}
		} else {
			require.Equal(t, "dead", fr.Body["status"])
		}
	}
	d := b.job(id)
	require.Equal(t, "dead", d["state"])
	require.Equal(t, "retries_exhausted", d["dead_reason"])
	errs := d["errors"].([]any)
	require.Len(t, errs, 3)
	for i, e := range errs {
		require.Equal(t, float64(i+1), e.(map[string]any)["attempt"])
		require.Equal(t, "boom", e.(map[string]any)["error"])
	}
}

func TestDelayedJobWaitsUntilDue(t *testing.T) {
	t.Parallel()
	b := setup(t)
	at := time.Now().Add(400 * time.Millisecond).UTC().Format(time.RFC3339Nano)
	r := b.call("POST", "/api/v1/enqueue", map[string]any{"queue": "later", "scheduled_at": at})
	require.Equal(t, 201, r.Status)
	require.Equal(t, "scheduled", r.Body["status"])
	id := r.Body["job_id"].(string)
	require.Equal(t, 204, b.fetch([]string{"later"}, nil).Status)
	// A waiting worker is woken by the promotion.
	f := b.fetch([]string{"later"}, map[string]any{"timeout": 5})
	require.Equal(t, 200, f.Status)
	require.Equal(t, id, f.Body["job_id"])
}

func TestUniqueJobs(t *testing.T) {
	t.Parallel()
	b := setup(t)
	body := map[string]any{"queue": "u", "unique_key": "user-42", "unique_period": 3600}
	id := b.enqueue(body)
	r := b.call("POST", "/api/v1/enqueue", body)
	require.Equal(t, 200, r.Status)
	require.Equal(t, id, r.Body["job_id"])
	require.Equal(t, true, r.Body["unique_existing"])
	// Same key on another queue is another lock.
	other := b.enqueue(map[string]any{"queue": "u2", "unique_key": "user-42"})
	require.NotEqual(t, id, other)
	// Once the job completes, the key is free again.
	f := b.fetch([]string{"u"}, nil)
	require.Equal(t, 200, b.call("POST", "/api/v1/ack/"+f.Body["job_id"].(string), nil).Status)
	again := b.enqueue(body)
	require.NotEqual(t, id, again)
}

func TestLeaseExpiryReclaimsWithCheckpoint(t *testing.T) {
	t.Parallel()
	b := setup(t)
	id := b.enqueue(map[string]any{"queue": "lease"})
	f := b.fetch([]string{"lease"}, map[string]any{"lease_duration": 1})
	require.Equal(t, 200, f.Status)
	hb := b.call("POST", "/api/v1/heartbeat", map[string]any{"jobs": map[string]any{
		id: map[string]any{"progress": map[string]any{"current": 5, "total": 10}, "checkpoint": map[string]any{"offset": 47}},
	}})
	require.Equal(t, 200, hb.Status, string(hb.Raw))
	require.Equal(t, "ok", hb.Body["jobs"].(map[string]any)[id].(map[string]any)["status"])
	d := b.job(id)
	require.Equal(t, map[string]any{"current": float64(5), "total": float64(10)}, d["progress"])

	// The worker goes silent: the lease runs out and another worker gets it.
	f2 := b.fetch([]string{"lease"}, map[string]any{"timeout": 5, "worker_id": "w2"})
	require.Equal(t, 200, f2.Status)
	require.Equal(t, id, f2.Body["job_id"])
	require.Equal(t, float64(2), f2.Body["attempt"])
	require.Equal(t, map[string]any{"offset": float64(47)}, f2.Body["checkpoint"])
	d = b.job(id)
	require.Len(t, d["errors"], 1)
	require.Equal(t, map[string]any{"id": "w2", "hostname": "host1"}, d["worker"])

	// The first worker's heartbeat learns it lost the job.
	hb = b.call("POST", "/api/v1/heartbeat", map[string]any{"worker_id": "w1", "jobs": map[string]any{id: map[string]any{}}})
	require.Equal(t, "lost", hb.Body["jobs"].(map[string]any)[id].(map[string]any)["status"])
}

func TestTTLExpiryMovesToDead(t *testing.T) {
	t.Parallel()
	b := setup(t)
	id := b.enqueue(map[string]any{"queue": "ttl", "expire_after": "300ms"})
	eventually(t, 5*time.Second, func() bool { return b.job(id)["state"] == "dead" }, "job expired")
	d := b.job(id)
	require.Equal(t, "expired", d["dead_reason"])
	require.Equal(t, 204, b.fetch([]string{"ttl"}, nil).Status)
}

func TestBatchIsAtomic(t *testing.T) {
	t.Parallel()
	b := setup(t)
	r := b.call("POST", "/api/v1/enqueue/batch", map[string]any{"jobs": []any{
		map[string]any{"queue": "b", "payload": 1},
		map[string]any{"queue": "b", "priority": "urgent"},
	}})
	require.Equal(t, 400, r.Status)
	require.Equal(t, "jobs[1].priority", errField(r))
	require.Equal(t, 204, b.fetch([]string{"b"}, nil).Status, "nothing of a refused batch was stored")

	jobs := make([]any, 1000)
	for i := range jobs {
		jobs[i] = map[string]any{"queue": "b", "payload": i}
	}
	r = b.call("POST", "/api/v1/enqueue/batch", map[string]any{"jobs": jobs})
	require.Equal(t, 201, r.Status, string(r.Raw))
	require.Len(t, r.Body["job_ids"], 1000)
	r = b.call("POST", "/api/v1/enqueue/batch", map[string]any{"jobs": append(jobs, map[string]any{"queue": "b"})})
	require.Equal(t, 400, r.Status)
	require.Equal(t, "jobs", errField(r))
}

func TestRestartKeepsState(t *testing.T) {
	t.Parallel()
	b := setup(t)
	id := b.enqueue(map[string]any{"queue": "keep", "payload": "x"})
	require.NoError(t, b.srv.Stop())
	b2 := start(t, b.dir)
	require.Equal(t, "pending", b2.job(id)["state"])
	f := b2.fetch([]string{"keep"}, nil)
	require.Equal(t, id, f.Body["job_id"])
}

// A stopping node answers its parked fetches at once with no job, and a
// fetch that arrives while it stops leases nothing (the job stays pending
// for the next leader).
func TestAStoppingNodeAnswersParkedFetchesAndLeasesNothing(t *testing.T) {
	t.Parallel()
	b := setup(t)
	done := make(chan resp, 1)
	go func() { done <- b.fetch([]string{"idle"}, map[string]any{"timeout": 30}) }()
	eventually(t, 5*time.Second, func() bool { return b.srv.waiters.Parked(testNS, "idle") > 0 }, "fetch parked")
	id := b.enqueue(map[string]any{"queue": "later"})
	b.srv.Service().Close() // what Stop does first
	select {
	case r := <-done:
		require.Equal(t, 204, r.Status)
	case <-time.After(10 * time.Second):
		t.Fatal("the parked fetch was not answered when the node began to stop")
	}
	r := b.fetch([]string{"later"}, map[string]any{"timeout": 0})
	require.Equal(t, 204, r.Status, "a stopping node leases nothing: %s", r.Raw)
	j := b.call("GET", "/api/v1/jobs/"+id, nil)
	require.Equal(t, "pending", j.Body["state"], "%s", j.Raw)
}

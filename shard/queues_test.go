package shard

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/wire"
)

func (b *bundle) queueView(name string) map[string]any {
	b.t.Helper()
	r := b.call("GET", "/api/v1/queues/"+name, nil)
	require.Equal(b.t, 200, r.Status, string(r.Raw))
	return r.Body
}

func TestQueueHTTPErrors(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for _, c := range []struct {
		method, path string
		body         any
		status       int
		field        string
	}{
		{"GET", "/api/v1/queues/nope", nil, 404, ""},
		{"GET", "/api/v1/queues/bad%20name", nil, 400, "queue"},
		{"POST", "/api/v1/queues/bad%20name/pause", nil, 400, "queue"},
		{"POST", "/api/v1/queues/nope/resume", nil, 404, ""},
		{"POST", "/api/v1/queues/nope/drain", nil, 404, ""},
		{"POST", "/api/v1/queues/nope/clear", nil, 404, ""},
		{"DELETE", "/api/v1/queues/nope?confirm=true", nil, 404, ""},
		{"DELETE", "/api/v1/queues/nope", nil, 400, "confirm"},
		{"DELETE", "/api/v1/queues/nope/throttle", nil, 404, ""},
		{"DELETE", "/api/v1/queues/nope/concurrency", nil, 404, ""},
		{"POST", "/api/v1/queues/q/concurrency", map[string]any{"max": 0}, 400, "max"},
		{"POST", "/api/v1/queues/q/concurrency", map[string]any{"max": 1.5}, 400, "max"},
		{"POST", "/api/v1/queues/q/concurrency", map[string]any{}, 400, "max"},
		{"POST", "/api/v1/queues/q/throttle", map[string]any{"rate": 0, "period": "1m"}, 400, "rate"},
		{"POST", "/api/v1/queues/q/throttle", map[string]any{"rate": 5, "period": "soon"}, 400, "period"},
		{"POST", "/api/v1/queues/q/throttle", map[string]any{"rate": 5, "period": "1ms"}, 400, "period"},
		{"POST", "/api/v1/queues/q/throttle", map[string]any{"rate": 5}, 400, "period"},
		{"POST", "/api/v1/queues/q/defaults", map[string]any{"max_retries": -1}, 400, "max_retries"},
		{"POST", "/api/v1/queues/q/defaults", map[string]any{"retry_backoff": "wild"}, 400, "retry_backoff"},
		{"POST", "/api/v1/queues/q/defaults", map[string]any{"lease_duration": "1ms"}, 400, "lease_duration"},
		{"POST", "/api/v1/queues/q/defaults", map[string]any{"retention": "x"}, 400, "retention"},
		{"POST", "/api/v1/queues/q/defaults", map[string]any{"bogus": 1}, 400, "bogus"},
	} {
		r := b.call(c.method, c.path, c.body)
		require.Equal(t, c.status, r.Status, "%s %s: %s", c.method, c.path, r.Raw)
		require.Equal(t, c.field, errField(r), "%s %s", c.method, c.path)
	}
	// Another namespace does not see this one's queue.
	b.enqueue(map[string]any{"queue": "mine"})
	r := b.call("GET", "/api/v1/queues/mine", nil, wire.ShardNamespaceHeader, "t_01hx0000000000000000000001/default")
	require.Equal(t, 404, r.Status)
	r = b.call("POST", "/api/v1/queues/mine/clear", nil, wire.ShardNamespaceHeader, "t_01hx0000000000000000000001/default")
	require.Equal(t, 404, r.Status)
}

func TestQueueHTTPListAndSettings(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.enqueue(map[string]any{"queue": "emails.send"})
	b.enqueue(map[string]any{"queue": "emails.send", "scheduled_at": time.Now().Add(time.Hour).Format(time.RFC3339)})
	r := b.call("GET", "/api/v1/queues", nil)
	require.Equal(t, 200, r.Status)
	qs := r.Body["queues"].([]any)
	require.Len(t, qs, 1)
	q := qs[0].(map[string]any)
	require.Equal(t, "emails.send", q["name"])
	require.EqualValues(t, map[string]any{"pending": 1.0, "scheduled": 1.0, "active": 0.0, "retrying": 0.0, "completed": 0.0, "dead": 0.0, "cancelled": 0.0, "held": 0.0}, q["counts"])
	require.GreaterOrEqual(t, q["oldest_pending_age"].(float64), 0.0)
	require.Nil(t, q["concurrency"])
	require.Nil(t, q["throttle"])

	r = b.call("POST", "/api/v1/queues/emails.send/concurrency", map[string]any{"max": 3})
	require.Equal(t, 200, r.Status, string(r.Raw))
	require.EqualValues(t, 3, r.Body["concurrency"])
	r = b.call("POST", "/api/v1/queues/emails.send/concurrency", map[string]any{"max": nil})
	require.Equal(t, 200, r.Status, string(r.Raw))
	require.Nil(t, r.Body["concurrency"])
	r = b.call("POST", "/api/v1/queues/emails.send/throttle", map[string]any{"rate": 100, "period": "1m"})
	require.Equal(t, 200, r.Status, string(r.Raw))
	require.Equal(t, map[string]any{"rate": 100.0, "period": "1m"}, r.Body["throttle"])
	r = b.call("DELETE", "/api/v1/queues/emails.send/throttle", nil)
	require.Equal(t, 200, r.Status)
	require.Nil(t, r.Body["throttle"])
	r = b.call("POST", "/api/v1/queues/emails.send/defaults", map[string]any{"max_retries": 1, "retention": "24h", "lease_duration": 120})
	require.Equal(t, 200, r.Status, string(r.Raw))
	d := r.Body["defaults"].(map[string]any)
	require.EqualValues(t, 1, d["max_retries"])
	require.Equal(t, "24h", d["retention"])
	require.Equal(t, "2m", d["lease_duration"])

	r = b.call("POST", "/api/v1/queues/emails.send/pause", nil)
	require.Equal(t, 200, r.Status)
	require.Equal(t, true, r.Body["paused"])
	r = b.call("POST", "/api/v1/queues/emails.send/resume", nil)
	require.Equal(t, false, r.Body["paused"])

	// Drain: paused and draining until the active job finishes.
	f := b.fetch([]string{"emails.send"}, nil)
	require.Equal(t, 200, f.Status)
	r = b.call("POST", "/api/v1/queues/emails.send/drain", nil)
	require.Equal(t, 200, r.Status, string(r.Raw))
	require.EqualValues(t, 1, r.Body["active"])
	v := b.queueView("emails.send")
	require.Equal(t, true, v["draining"])
	require.Equal(t, false, v["drained"])
	require.Equal(t, 200, b.call("POST", "/api/v1/ack/"+f.Body["job_id"].(string), nil).Status)
	v = b.queueView("emails.send")
	require.Equal(t, true, v["drained"])
	require.Greater(t, v["throughput"].(float64), 0.0)
}

func TestQueueDefaultsApplyAndAreOverridden(t *testing.T) {
	t.Parallel()
	b := setup(t)
	r := b.call("POST", "/api/v1/queues/q/defaults", map[string]any{"max_retries": 9, "retry_backoff": "fixed", "retry_base_delay": "1s", "lease_duration": "5m"})
	require.Equal(t, 200, r.Status, string(r.Raw))
	a := b.job(b.enqueue(map[string]any{"queue": "q"}))
	require.EqualValues(t, 9, a["max_retries"])
	require.Equal(t, "fixed", a["retry_backoff"])
	require.Equal(t, "1s", a["retry_base_delay"])
	o := b.job(b.enqueue(map[string]any{"queue": "q", "max_retries": 0, "retry_backoff": "linear"}))
	require.EqualValues(t, 0, o["max_retries"])
	require.Equal(t, "linear", o["retry_backoff"])
	require.Equal(t, "1s", o["retry_base_delay"])
	f := b.fetch([]string{"q"}, nil)
	require.EqualValues(t, 300, f.Body["lease_duration"])
	f = b.fetch([]string{"q"}, map[string]any{"lease_duration": 10})
	require.EqualValues(t, 10, f.Body["lease_duration"])
}

func TestQueueClearAndDelete(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for i := 0; i < 5; i++ {
		b.enqueue(map[string]any{"queue": "q"})
	}
	b.enqueue(map[string]any{"queue": "q", "scheduled_at": time.Now().Add(time.Hour).Format(time.RFC3339)})
	act := b.fetch([]string{"q"}, nil).Body["job_id"].(string)
	r := b.call("POST", "/api/v1/queues/q/clear", nil)
	require.Equal(t, 200, r.Status, string(r.Raw))
	require.EqualValues(t, 5, r.Body["cleared"])
	require.Equal(t, 204, b.fetch([]string{"q"}, nil).Status)
	require.Equal(t, "active", b.job(act)["state"])

	r = b.call("DELETE", "/api/v1/queues/q?confirm=true", nil)
	require.Equal(t, 200, r.Status, string(r.Raw))
	require.EqualValues(t, 1, r.Body["jobs_deleted"])
	require.Equal(t, 404, b.call("GET", "/api/v1/jobs/"+act, nil).Status)
	require.Equal(t, 404, b.call("GET", "/api/v1/queues/q", nil).Status)
	r = b.call("GET", "/api/v1/queues", nil)
	require.Empty(t, r.Body["queues"])
	// The queue can be used again from scratch.
	b.enqueue(map[string]any{"queue": "q"})
	require.EqualValues(t, 1, b.queueView("q")["counts"].(map[string]any)["pending"])
}

func TestQueuePauseStopsFetchesAndResumeWakes(t *testing.T) {
	t.Parallel()
	b := setup(t)
	require.Equal(t, 200, b.call("POST", "/api/v1/queues/q/pause", nil).Status)
	id := b.enqueue(map[string]any{"queue": "q"})
	require.Equal(t, 204, b.fetch([]string{"q"}, nil).Status)
	got := make(chan resp, 1)
	start := time.Now()
	go func() { got <- b.fetch([]string{"q"}, map[string]any{"timeout": 10}) }()
	time.Sleep(300 * time.Millisecond)
	select {
	case r := <-got:
		t.Fatalf("fetch from a paused queue returned %d", r.Status)
	default:
	}
	require.Equal(t, 200, b.call("POST", "/api/v1/queues/q/resume", nil).Status)
	r := <-got
	require.Equal(t, 200, r.Status)
	require.Equal(t, id, r.Body["job_id"])
	require.Less(t, time.Since(start), 3*time.Second, "the parked fetch was woken by resume")
}

// A singleton queue never has two jobs active, with 20 workers racing.
func TestQueueSingletonWithConcurrentWorkers(t *testing.T) {
	t.Parallel()
	b := setup(t)
	require.Equal(t, 200, b.call("POST", "/api/v1/queues/one/concurrency", map[string]any{"max": 1}).Status)
	const jobs = 40
	for i := 0; i < jobs; i++ {
		b.enqueue(map[string]any{"queue": "one"})
	}
	var active, maxActive, done atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < 20; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for done.Load() < jobs {
				r := b.fetch([]string{"one"}, map[string]any{"timeout": 1, "worker_id": fmt.Sprintf("w%d", w)})
				if r.Status != 200 {
					continue
				}
				n := active.Add(1)
				for m := maxActive.Load(); n > m && !maxActive.CompareAndSwap(m, n); m = maxActive.Load() {
				}
				time.Sleep(2 * time.Millisecond)
				active.Add(-1)
				require.Equal(t, 200, b.call("POST", "/api/v1/ack/"+r.Body["job_id"].(string), nil).Status)
				done.Add(1)
			}
		}(w)
	}
	wg.Wait()
	require.EqualValues(t, jobs, done.Load())
	require.EqualValues(t, 1, maxActive.Load())
}

// A throttle of 10/s lets through 10±1 fetches in each second.
func TestQueueThrottleTenPerSecond(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for i := 0; i < 200; i++ {
		b.enqueue(map[string]any{"queue": "slow"})
	}
	require.Equal(t, 200, b.call("POST", "/api/v1/queues/slow/throttle", map[string]any{"rate": 10, "period": "1s"}).Status)
	var mu sync.Mutex
	var ids []string
	stop := time.Now().Add(5 * time.Second)
	var wg sync.WaitGroup
	for w := 0; w < 5; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(stop) {
				wait := time.Until(stop).Seconds()
				r := b.fetch([]string{"slow"}, map[string]any{"timeout": wait})
				if r.Status == 200 {
					mu.Lock()
					ids = append(ids, r.Body["job_id"].(string))
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	// When each job was leased, by the clock the throttle counts with (the
	// leader's stamp on the fetch), not when its answer reached a worker
	// on a busy machine.
	var times []time.Time
	for _, id := range ids {
		at, err := time.Parse(time.RFC3339Nano, b.job(id)["started_at"].(string))
		require.NoError(t, err)
		times = append(times, at)
	}
	require.NotEmpty(t, times)
	first := times[0]
	for _, ts := range times {
		if ts.Before(first) {
			first = ts
		}
	}
	per := make([]int, 5)
	for _, ts := range times {
		if s := int(ts.Sub(first) / time.Second); s < 5 {
			per[s]++
		}
	}
	for s, n := range per[:4] {
		require.InDelta(t, 10, n, 1, "second %d: %v", s, per)
	}
	require.InDelta(t, 50, len(times), 6, "%v", per)
}

package shard

import (
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/wire"
)

// One tenant's push endpoint that never answers does not slow another
// tenant's deliveries. Tenant A's handler holds every request until the
// test ends, its queue at its max_in_flight (the per-tenant bound of
// outbound calls); tenant B's answers at once. B's enqueue→handler
// latency, one job at a time, alone and then beside A's stuck
// deliveries: every B job completes, and B's p50 beside A stays within a
// generous bound of alone. The figures are in docs/BENCHMARKS.md.
func TestPushStuckTenantDoesNotSlowAnother(t *testing.T) {
	t.Parallel()
	const (
		nsA, nsB = testNS, otherTestNS // two tenants
		jobs     = 150                 // B's, per phase
		inFlight = 32                  // A's max_in_flight: outbound's default per-tenant bound
	)
	hold := make(chan struct{})
	stuck := newReceiver(t, func(w http.ResponseWriter, d wire.PushDelivery, n int) { <-hold })
	var mu sync.Mutex
	arrived := map[string]chan time.Time{} // B's job id → when its delivery came
	arrival := func(id string) chan time.Time {
		mu.Lock()
		defer mu.Unlock()
		if arrived[id] == nil {
			arrived[id] = make(chan time.Time, 1)
		}
		return arrived[id]
	}
	quick := newReceiver(t, func(w http.ResponseWriter, d wire.PushDelivery, n int) {
		at := time.Now()
		select {
		case arrival(d.JobID) <- at:
		default: // a redelivery: the first arrival counts
		}
		w.WriteHeader(204)
	})
	t.Cleanup(func() { close(hold) }) // before the servers close: they wait for their handlers
	pool := hookPool()
	pool.AddCert(stuck.srv.Certificate())
	pool.AddCert(quick.srv.Certificate())
	b := setup(t, func(c *Config) { c.PushAllowPrivate, c.PushRootCAs = true, pool })
	a, bb := b.in(nsA), b.in(nsB)
	stuck.keys.Store(publicKeys(t, b, nsA))
	quick.keys.Store(publicKeys(t, b, nsB))
	a.ok("PUT", "/api/v1/queues/slow", map[string]any{"push": map[string]any{"url": stuck.srv.URL, "timeout": "15m",
		"max_in_flight": inFlight}}, 200)
	bb.ok("PUT", "/api/v1/queues/fast", map[string]any{"push": map[string]any{"url": quick.srv.URL}}, 200)

	// measure enqueues B's jobs one at a time and answers each one's
	// enqueue→handler latency, sorted.
	measure := func() []time.Duration {
		out := make([]time.Duration, 0, jobs)
		for range jobs {
			start := time.Now()
			id := bb.ok("POST", "/api/v1/enqueue", map[string]any{"queue": "fast", "payload": 1}, 201).Body["job_id"].(string)
			select {
			case at := <-arrival(id):
				out = append(out, at.Sub(start))
			case <-time.After(30 * time.Second):
				t.Fatalf("B's job %s was not delivered within 30 s", id)
			}
		}
		slices.Sort(out)
		return out
	}
	alone := measure()

	for range 2 * inFlight {
		a.ok("POST", "/api/v1/enqueue", map[string]any{"queue": "slow", "payload": 1}, 201)
	}
	eventually(t, 30*time.Second, func() bool { return stuck.inFlight.Load() == inFlight },
		"A's deliveries never filled its max_in_flight")
	beside := measure()
	require.EqualValues(t, inFlight, stuck.inFlight.Load(), "A stayed stuck at its max_in_flight throughout")

	pct := func(d []time.Duration, p int) time.Duration { return d[len(d)*p/100] }
	t.Logf("B's enqueue→handler over %d jobs: alone p50 %v p90 %v p99 %v; beside A's %d stuck deliveries p50 %v p90 %v p99 %v",
		jobs, pct(alone, 50), pct(alone, 90), pct(alone, 99), inFlight, pct(beside, 50), pct(beside, 90), pct(beside, 99))
	require.LessOrEqual(t, pct(beside, 50), 3*pct(alone, 50)+20*time.Millisecond,
		"B's p50 beside A's stuck endpoint is far above its p50 alone")

	eventually(t, 30*time.Second, func() bool {
		n := bb.ok("GET", "/api/v1/queues/fast", nil, 200).Body["counts"].(map[string]any)
		return n["completed"] == float64(2*jobs)
	}, "B's jobs did not all complete")
	require.Zero(t, quick.bad.Load()+stuck.bad.Load(), "every request verified")
}

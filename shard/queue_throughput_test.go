package shard

import (
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/require"
)

// throughputSeries is queue's throughput_per_minute from GET
// /api/v1/queues/{name}, checked against GET /api/v1/queues.
func (b *bundle) throughputSeries(queue string) []any {
	b.t.Helper()
	r := b.call("GET", "/api/v1/queues/"+queue, nil)
	require.Equal(b.t, 200, r.Status, string(r.Raw))
	list := b.call("GET", "/api/v1/queues", nil)
	require.Equal(b.t, 200, list.Status)
	for _, q := range list.Body["queues"].([]any) {
		if q := q.(map[string]any); q["name"] == queue {
			require.Equal(b.t, r.Body["throughput_per_minute"], q["throughput_per_minute"])
		}
	}
	return r.Body["throughput_per_minute"].([]any)
}

func TestQueueThroughputPerMinute(t *testing.T) {
	t.Parallel()
	clock := clockwork.NewFakeClockAt(time.Date(2026, 11, 24, 13, 37, 10, 0, time.UTC))
	b := setup(t, withClock(clock))
	b.enqueue(map[string]any{"queue": "tp"})
	require.Equal(t, []any{0.0, 0.0, 0.0, 0.0, 0.0}, b.throughputSeries("tp"), "5 entries before any completion")

	done := func() {
		t.Helper()
		f := b.fetch([]string{"tp"}, nil)
		require.Equal(t, 200, f.Status, string(f.Raw))
		require.Equal(t, 200, b.call("POST", "/api/v1/ack/"+f.Body["job_id"].(string), nil).Status)
	}
	done()
	require.Equal(t, []any{0.0, 0.0, 0.0, 0.0, 1.0}, b.throughputSeries("tp"), "the current minute is last")

	clock.Advance(time.Minute)
	b.enqueue(map[string]any{"queue": "tp"})
	b.enqueue(map[string]any{"queue": "tp"})
	done()
	done()
	require.Equal(t, []any{0.0, 0.0, 0.0, 1.0, 2.0}, b.throughputSeries("tp"))
	r := b.call("GET", "/api/v1/queues/tp", nil)
	require.InDelta(t, 3.0/5, r.Body["throughput"], 1e-9, "throughput averages the same buckets")

	clock.Advance(3 * time.Minute)
	require.Equal(t, []any{1.0, 2.0, 0.0, 0.0, 0.0}, b.throughputSeries("tp"), "older minutes slide left")
	clock.Advance(2 * time.Minute)
	require.Equal(t, []any{0.0, 0.0, 0.0, 0.0, 0.0}, b.throughputSeries("tp"), "out of the window")
}

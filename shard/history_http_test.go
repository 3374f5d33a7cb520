package shard

import (
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/shard/keys"
	"github.com/jobbie/jobbie/wire"
)

// historyTotals sums a queue's minute history over its default range.
func (n *nsCaller) historyTotals(queue string) map[string]float64 {
	n.b.t.Helper()
	r := n.ok("GET", "/api/v1/queues/"+queue+"/stats", nil, 200)
	sum := map[string]float64{}
	for _, b := range r.Body["buckets"].([]any) {
		b := b.(map[string]any)
		for _, k := range []string{"enqueued", "completed", "failed", "dead"} {
			sum[k] += b[k].(float64)
		}
		sum["attempts"] += b["processing_time"].(map[string]any)["count"].(float64)
	}
	return sum
}

// A namespace's queue history is part of its backup, and a restore into
// another namespace answers the same history.
func TestBackupRestoreCarriesHistory(t *testing.T) {
	t.Parallel()
	b := setup(t)
	src := b.in(testNS)
	for range 3 {
		src.ok("POST", "/api/v1/enqueue", map[string]any{"queue": "hq"}, 201)
	}
	id := src.ok("POST", "/api/v1/fetch", map[string]any{"queues": []string{"hq"}, "worker_id": "w", "timeout": 0}, 200).Body["job_id"].(string)
	src.ok("POST", "/api/v1/ack/"+id, map[string]any{"worker_id": "w"}, 200)
	want := map[string]float64{"enqueued": 3, "completed": 1, "failed": 0, "dead": 0, "attempts": 1}
	require.Equal(t, want, src.historyTotals("hq"))

	raw := b.backupOf(testNS)
	var buckets int
	for k := range readStream(t, raw).records {
		if k[0] == keys.KindHistory {
			buckets++
		}
	}
	require.Equal(t, 2, buckets, "the queue's minute and its hour")
	r := b.restoreInto(restoredNS, wire.RestoreNew, raw)
	require.Equal(t, 200, r.Status, string(r.Raw))
	require.Equal(t, want, b.in(restoredNS).historyTotals("hq"))
}

// A move takes a namespace's queue history to the target shard, with
// what was counted between the snapshot and the fence.
func TestMoveCarriesHistory(t *testing.T) {
	t.Parallel()
	src, dst := setup(t), setup(t)
	s := src.in(testNS)
	s.ok("POST", "/api/v1/enqueue", map[string]any{"queue": "hq"}, 201)
	const tok = "mov_01JD0000000000000000000009"
	dst.mvOK("POST", "begin", testNS, tok, nil)
	copyStream(t, src, dst, "snapshot", tok)
	s.ok("POST", "/api/v1/enqueue", map[string]any{"queue": "hq"}, 201)
	id := s.ok("POST", "/api/v1/fetch", map[string]any{"queues": []string{"hq"}, "worker_id": "w", "timeout": 0}, 200).Body["job_id"].(string)
	s.ok("POST", "/api/v1/ack/"+id, map[string]any{"worker_id": "w"}, 200)
	src.mvOK("POST", "fence", testNS, tok, map[string]any{"ttl_ms": 30000})
	copyStream(t, src, dst, "delta", tok)
	dst.mvOK("POST", "end", testNS, tok, nil)
	want := map[string]float64{"enqueued": 2, "completed": 1, "failed": 0, "dead": 0, "attempts": 1}
	require.Equal(t, want, dst.in(testNS).historyTotals("hq"))
}

// The leader samples a busy queue's depth and oldest pending age into its
// history on its own, by the node's clock.
func TestLeaderSamplesQueueDepth(t *testing.T) {
	t.Parallel()
	start := time.Date(2030, 1, 2, 3, 4, 0, 0, time.UTC)
	clock := clockwork.NewFakeClockAt(start)
	b := setup(t, withClock(clock))
	n := b.in(testNS)
	for range 3 {
		n.ok("POST", "/api/v1/enqueue", map[string]any{"queue": "hq"}, 201)
	}
	clock.Advance(20 * time.Second)
	var last map[string]any
	eventually(t, 10*time.Second, func() bool {
		clock.Advance(100 * time.Millisecond) // the sweep's tick
		buckets := n.ok("GET", "/api/v1/queues/hq/stats", nil, 200).Body["buckets"].([]any)
		last = buckets[len(buckets)-1].(map[string]any)
		return last["pending"] == 3.0
	}, "the leader samples the queue")
	require.True(t, start.Equal(mustTime(t, last["start"])), "the sample is in the minute of the leader's clock")
	require.GreaterOrEqual(t, last["oldest_pending_age"], 20.0)
	require.Less(t, last["oldest_pending_age"], 40.0)
}

func mustTime(t *testing.T, v any) time.Time {
	t.Helper()
	at, err := time.Parse(time.RFC3339, v.(string))
	require.NoError(t, err)
	return at
}

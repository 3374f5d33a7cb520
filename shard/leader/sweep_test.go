package leader

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/cockroachdb/pebble"
	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/shard/engine"
	"github.com/jobbie/jobbie/shard/job"
	"github.com/jobbie/jobbie/shard/keys"
)

// sweepOnly is a leader's sweep on leaderNode, with loops that are not
// started: the test runs their sweep itself.
func sweepOnly(t *testing.T) (*Loops, *replica.Node, *clockwork.FakeClock, context.Context) {
	t.Helper()
	eng, node, svc, clk, ctx := leaderNode(t)
	return &Loops{cfg: Config{Clock: clk, Logger: quiet}.withDefaults(), eng: eng, node: node, svc: svc, swept: map[string]int64{}}, node, clk, ctx
}

// enqueueAt enqueues job id in queue q of ns: pending, or scheduled at
// scheduledAt if not 0.
func enqueueAt(t *testing.T, ctx context.Context, node *replica.Node, ns, id string, scheduledAt int64) {
	t.Helper()
	j := &job.Job{ID: id, Queue: "q", Backoff: job.BackoffFixed, BaseDelay: int64(time.Second), MaxDelay: int64(time.Minute)}
	if scheduledAt != 0 {
		j.State, j.ScheduledAt = job.Scheduled, scheduledAt
	}
	_, err := engine.Enqueue.Propose(ctx, node, &engine.EnqueueCmd{NS: ns, Jobs: [][]byte{j.Encode()}})
	require.NoError(t, err)
}

// A due key that names a job gone or in another state (as an older
// build's restore or move could leave) is proposed once, changes nothing,
// and does not keep the sweep's window open: the next sweep proposes
// nothing, where it used to propose the key again at every tick. A job
// really due is promoted alongside it.
func TestSweepClosesOverStaleKeys(t *testing.T) {
	t.Parallel()
	l, node, clk, ctx := sweepOnly(t)

	const ns = "t_01hx0000000000000000000002/sweep"
	now := clk.Now().UnixNano()
	const pending, due, gone = "job_00000000000000000000000001", "job_00000000000000000000000002", "job_00000000000000000000000003"
	enqueueAt(t, ctx, node, ns, pending, 0)
	enqueueAt(t, ctx, node, ns, due, now+int64(time.Second))
	// Stale keys, written under the state machine as an older build's
	// restore left them: one names a pending job, one a job never stored.
	for _, id := range []string{pending, gone} {
		require.NoError(t, node.DB().Set(keys.Timed(ns, keys.KindDue, now-int64(time.Minute), id), nil, pebble.NoSync))
	}

	clk.Advance(2 * time.Second)
	now = clk.Now().UnixNano()
	require.NoError(t, l.sweepIndex(ctx, ns, keys.KindDue, engine.Promote, now))
	j, err := engine.ReadJob(node.DB(), ns, due)
	require.NoError(t, err)
	require.Equal(t, job.Pending, j.State, "the job really due was promoted")
	require.Equal(t, now+1, l.swept[ns+"\x00"+string(keys.KindDue)], "the window closed over the stale keys")

	before := node.AppliedIndex()
	clk.Advance(time.Second)
	require.NoError(t, l.sweepIndex(ctx, ns, keys.KindDue, engine.Promote, clk.Now().UnixNano()))
	require.Equal(t, before, node.AppliedIndex(), "the next sweep proposed nothing")
	for _, id := range []string{pending, gone} {
		require.False(t, engine.TimedKeyLive(node.DB(), ns, keys.KindDue, now-int64(time.Minute), id))
	}
	require.False(t, engine.TimedKeyLive(node.DB(), ns, keys.KindDue, now-int64(time.Second), due), "promoted: its due key is gone")
}

// More stale keys than one sweep command names: the sweep steps past each
// batch instead of reading the same keys again (where it would never
// end), and reaches the job due behind them.
func TestSweepStepsOverBatchesOfStaleKeys(t *testing.T) {
	t.Parallel()
	l, node, clk, ctx := sweepOnly(t)
	const ns = "t_01hx0000000000000000000002/batches"
	now := clk.Now().UnixNano()
	const due = "job_00000000000000000000000001"
	enqueueAt(t, ctx, node, ns, due, now+int64(time.Second))
	b := node.DB().NewBatch()
	for i := range 2*sweepBatch + 10 {
		id := fmt.Sprintf("job_%026d", i+100)
		require.NoError(t, b.Set(keys.Timed(ns, keys.KindDue, now-int64(time.Minute)+int64(i), id), nil, nil))
	}
	require.NoError(t, b.Commit(pebble.NoSync))

	clk.Advance(2 * time.Second)
	now = clk.Now().UnixNano()
	require.NoError(t, l.sweepIndex(ctx, ns, keys.KindDue, engine.Promote, now))
	j, err := engine.ReadJob(node.DB(), ns, due)
	require.NoError(t, err)
	require.Equal(t, job.Pending, j.State)
	require.Equal(t, now+1, l.swept[ns+"\x00"+string(keys.KindDue)])
}

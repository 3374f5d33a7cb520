package engine

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/shard/job"
	"github.com/jobbie/jobbie/shard/keys"
)

// wakes records the engine's wake-ups.
type wakes struct{ n map[string]int }

func (w *wakes) Wake(_, queue string, n int)                       { w.n[queue] += n }
func (w *wakes) WakeAt(string, string, int64, func(now int64) int) {}

func (f *fsmBundle) keyed(queue, fkey, ckey string, prio job.Priority) string {
	f.t.Helper()
	j := &job.Job{Queue: queue, Priority: prio}
	j.SetKeys(ckey, fkey)
	id := f.enqueue(j)
	f.advance(time.Millisecond)
	return id
}

// fetchKeys fetches until nothing comes and lists each job's fairness
// key (or its concurrency key when it has no fairness key).
func (f *fsmBundle) fetchKeys(queue string, n int) []string {
	f.t.Helper()
	var out []string
	for range n {
		j := f.fetch(queue)
		if j == nil {
			break
		}
		k := j.FairnessKey()
		if k == "" {
			k = j.ConcurrencyKey()
		}
		out = append(out, k)
	}
	return out
}

// Fairness keys take turns within a priority; an idle key takes nothing
// from the others; within a key, jobs go oldest first.
func TestKeyedRoundRobin(t *testing.T) {
	f := setupFSM(t)
	var big []string
	for range 6 {
		big = append(big, f.keyed("q", "big", "", job.Normal))
	}
	f.keyed("q", "small", "", job.Normal)
	f.keyed("q", "small", "", job.Normal)
	plain := f.enqueue(&job.Job{Queue: "q"}) // fairness key ""
	require.Equal(t, []string{"", "big", "small", "big", "small", "big", "big", "big", "big"}, f.fetchKeys("q", 20))

	// FIFO within a key.
	g := setupFSM(t)
	for range 3 {
		big = append(big[:0], g.keyed("q", "k", "", job.Normal))
	}
	_ = plain
	first := g.fetch("q")
	require.Equal(t, "k", first.FairnessKey())
	require.Less(t, first.CreatedAt, g.fetch("q").CreatedAt)
}

// A higher priority wins over the turn of the keys.
func TestKeyedPriorityFirst(t *testing.T) {
	f := setupFSM(t)
	for range 3 {
		f.keyed("q", "big", "", job.Normal)
	}
	f.keyed("q", "small", "", job.Critical)
	f.enqueue(&job.Job{Queue: "q", Priority: job.High})
	got := []string{}
	for range 5 {
		j := f.fetch("q")
		got = append(got, j.Priority.String()+":"+j.FairnessKey())
	}
	require.Equal(t, []string{"critical:small", "high:", "normal:big", "normal:big", "normal:big"}, got)
}

// The turn is replicated state: a node that drops its caches (a restart,
// a snapshot restore) continues the same order.
func TestKeyedTurnSurvivesCaches(t *testing.T) {
	run := func(cold bool) []string {
		f := setupFSM(t)
		for _, k := range []string{"a", "a", "a", "b", "b", "b", "c", "c", "c"} {
			f.keyed("q", k, "", job.Normal)
		}
		var out []string
		for range 9 {
			if cold {
				f.e.reset()
			}
			out = append(out, f.fetch("q").FairnessKey())
		}
		return out
	}
	warm := run(false)
	require.Equal(t, []string{"a", "b", "c", "a", "b", "c", "a", "b", "c"}, warm)
	require.Equal(t, warm, run(true))
}

// key_concurrency caps the active jobs of each concurrency key: a capped
// key's jobs are passed over for the others, and a job leaving active
// wakes a parked fetch and lets the next one of its key go.
func TestKeyConcurrency(t *testing.T) {
	f := setupFSM(t)
	w := &wakes{n: map[string]int{}}
	f.e.waker = w
	require.Nil(t, f.apply(QueueConfigure.Type, &QueueConfigCmd{NS: testNS, Queue: "q", KeyMax: 2}))
	var a []string
	for range 4 {
		a = append(a, f.keyed("q", "", "A", job.Normal))
	}
	f.keyed("q", "", "B", job.Normal)
	f.enqueue(&job.Job{Queue: "q"}) // no key: never capped
	got := f.fetchKeys("q", 10)
	require.ElementsMatch(t, []string{"A", "A", "B", ""}, got)
	require.Nil(t, f.fetch("q"), "A is at its cap")
	require.Equal(t, int64(2), f.queue("q").Count(job.Pending))

	before := w.n["q"]
	require.Equal(t, job.Completed, f.apply(Ack.Type, &AckCmd{NS: testNS, ID: a[0], WorkerID: "w"}))
	require.Equal(t, before+1, w.n["q"], "a freed key slot wakes a fetch")
	j := f.fetch("q")
	require.NotNil(t, j)
	require.Equal(t, a[2], j.ID, "the oldest waiting job of the key")
	require.Nil(t, f.fetch("q"))

	// A lease running out frees the slot too.
	f.advance(11 * time.Second)
	require.Equal(t, 1, f.apply(ReclaimCounted.Type, &SweepCmd{NS: testNS, IDs: []string{a[1]}}))
	require.NotNil(t, f.fetch("q"))

	// Removing the cap lets the rest go.
	require.Nil(t, f.apply(QueueConfigure.Type, &QueueConfigCmd{NS: testNS, Queue: "q"}))
	for f.fetch("q") != nil {
	}
	require.Zero(t, f.queue("q").Count(job.Pending))
	require.Zero(t, f.queue("q").Keyed)
}

// max_pending_jobs: an enqueue that would take the namespace's unfinished
// jobs past the limit is refused whole and changes nothing; finished jobs
// make room.
func TestMaxPendingJobs(t *testing.T) {
	f := setupFSM(t)
	enq := func(n int, limit int64) any {
		c := &EnqueueCmd{NS: testNS, MaxPending: limit}
		for range n {
			j := &job.Job{ID: f.e.newIDForTest(), Queue: "q", Backoff: job.BackoffFixed}
			c.Jobs = append(c.Jobs, j.Encode())
		}
		return f.apply(Enqueue.Type, c)
	}
	require.IsType(t, []EnqueueResult{}, enq(2, 3))
	f.enqueue(&job.Job{Queue: "q", ScheduledAt: f.now.Add(time.Hour).UnixNano()}) // scheduled counts
	n, ok := Unfinished(f.db, testNS)
	require.True(t, ok)
	require.Equal(t, int64(3), n)
	res := enq(1, 3)
	requireCode(t, res, apierr.QuotaExceeded)
	require.Contains(t, res.(error).Error(), "max_pending_jobs is 3")
	require.Equal(t, int64(2), f.queue("q").Count(job.Pending), "nothing changed")

	j := f.fetch("q") // active still counts
	requireCode(t, enq(1, 3), apierr.QuotaExceeded)
	require.Equal(t, job.Completed, f.apply(Ack.Type, &AckCmd{NS: testNS, ID: j.ID, WorkerID: "w"}))
	require.IsType(t, []EnqueueResult{}, enq(1, 3), "a completed job makes room")
	requireCode(t, enq(2, 4), apierr.QuotaExceeded)
	require.IsType(t, []EnqueueResult{}, enq(2, 0), "no limit")
	n, _ = Unfinished(f.db, testNS)
	require.Equal(t, int64(5), n)
}

// A namespace whose counter was never written starts from its queues'
// counts.
func TestUnfinishedFromQueueCounts(t *testing.T) {
	f := setupFSM(t)
	for _, q := range []string{"a", "b"} {
		f.enqueue(&job.Job{Queue: q})
		f.enqueue(&job.Job{Queue: q})
	}
	f.fetch("a")
	require.NoError(t, f.db.Delete(keys.Unfinished(testNS), nil))
	f.e.reset()
	tx := replica.NewTx(f.db.NewIndexedBatch(), f.now, 0)
	require.Equal(t, int64(4), f.e.queues.unfinishedOf(tx, testNS))
}

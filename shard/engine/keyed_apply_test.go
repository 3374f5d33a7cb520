package engine

import (
	"testing"
	"time"

	"github.com/cockroachdb/pebble"
	"github.com/cockroachdb/pebble/vfs"
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
	ready, _ := f.e.QueueReady(f.db, testNS, "q", f.now.UnixNano())
	require.False(t, ready, "every pending job is capped: a parked fetch waits")

	before := w.n["q"]
	require.Equal(t, job.Completed, f.apply(Ack.Type, &AckCmd{NS: testNS, ID: a[0], WorkerID: "w"}))
	require.Equal(t, before+1, w.n["q"], "a freed key slot wakes a fetch")
	ready, _ = f.e.QueueReady(f.db, testNS, "q", f.now.UnixNano())
	require.True(t, ready)
	j := f.fetch("q")
	require.NotNil(t, j)
	require.Equal(t, a[2], j.ID, "the oldest waiting job of the key")
	require.Nil(t, f.fetch("q"))

	// A lease running out frees the slot too.
	f.advance(11 * time.Second)
	require.Equal(t, 1, f.apply(ReclaimCounted.Type, &SweepCmd{NS: testNS, IDs: []string{a[1]}}))
	require.NotNil(t, f.fetch("q"))

	// Lowering the cap holds back more; removing it lets the rest go.
	require.Nil(t, f.apply(QueueConfigure.Type, &QueueConfigCmd{NS: testNS, Queue: "q", KeyMax: 1}))
	require.Equal(t, f.queue("q").Count(job.Pending), f.queue("q").Blocked)
	require.Nil(t, f.apply(QueueConfigure.Type, &QueueConfigCmd{NS: testNS, Queue: "q"}))
	require.Zero(t, f.queue("q").Blocked)
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

// Clearing a queue takes its keyed pending jobs too, group keys and
// count with them.
func TestKeyedClear(t *testing.T) {
	f := setupFSM(t)
	f.enqueue(&job.Job{Queue: "q"})
	for _, k := range []string{"a", "b", "b"} {
		f.keyed("q", k, "c", job.Normal)
	}
	require.EqualValues(t, 3, f.queue("q").Keyed)
	c := &QueueSweepCmd{NS: testNS, Queue: "q"}
	removed := 0
	for {
		st := f.apply(QueueClearAll.Type, c).(*QueueStep)
		removed += st.Removed
		if st.Next == nil {
			break
		}
		c.Phase, c.After = st.Phase, st.Next
	}
	require.Equal(t, 4, removed)
	require.Zero(t, f.queue("q").Keyed)
	require.Zero(t, f.queue("q").Count(job.Pending))
	g := keys.KeyedQueue(testNS, keys.KindKeyedGroup, "q")
	it, err := f.db.NewIter(&pebble.IterOptions{LowerBound: g, UpperBound: keys.PrefixEnd(g)})
	require.NoError(t, err)
	require.False(t, it.First(), "no group keys left")
	require.NoError(t, it.Close())
	n, _ := Unfinished(f.db, testNS)
	require.Zero(t, n)
}

// The keyed counts are exact after random logs of every command: each
// queue's Keyed and Blocked, each concurrency key's active and pending
// jobs, each group's size and each namespace's unfinished jobs match what
// the job records say.
func TestKeyedCountsStayExact(t *testing.T) {
	t.Parallel()
	blockedSeen := int64(0)
	defer func() { require.Positive(t, blockedSeen, "the scripts capped some key") }()
	for seed := int64(1); seed <= 3; seed++ {
		log, _ := makeScript(seed, 400)
		db, err := pebble.Open("", &pebble.Options{FS: vfs.NewMem()})
		require.NoError(t, err)
		loc, err := replica.NewLocal(db, newScriptEngine().Registry())
		require.NoError(t, err)
		for i, e := range log {
			loc.Apply(e.now, e.cmds...)
			if i%20 == 19 {
				for _, ns := range []string{testNS, otherNS} {
					blockedSeen += checkKeyedCounts(t, db, ns)
				}
			}
		}
		require.NoError(t, db.Close())
	}
}

// checkKeyedCounts checks ns's counts and returns its queues' Blocked.
func checkKeyedCounts(t *testing.T, db *pebble.DB, ns string) (blockedAll int64) {
	t.Helper()
	type qk struct{ queue, ckey string }
	type gk struct {
		queue      string
		prio       uint8
		fkey, ckey string
	}
	keyed, unfinishedJobs := map[string]int64{}, int64(0)
	counts, groups := map[qk]keyCount{}, map[gk]int64{}
	jp := keys.Job(ns, "")
	it, err := db.NewIter(&pebble.IterOptions{LowerBound: jp, UpperBound: keys.PrefixEnd(jp)})
	require.NoError(t, err)
	for ok := it.First(); ok; ok = it.Next() {
		j := new(job.Job)
		require.NoError(t, j.Decode(it.Value()))
		if unfinished(j.State) {
			unfinishedJobs++
		}
		c := counts[qk{j.Queue, j.ConcurrencyKey()}]
		switch {
		case j.State == job.Pending && j.Keyed():
			keyed[j.Queue]++
			groups[gk{j.Queue, uint8(j.Priority), j.FairnessKey(), j.ConcurrencyKey()}]++
			c.pending++
		case j.State == job.Active:
			c.active++
		}
		if j.ConcurrencyKey() != "" {
			counts[qk{j.Queue, j.ConcurrencyKey()}] = c
		}
	}
	require.NoError(t, it.Close())

	qp := keys.QueuePrefix(ns)
	it, err = db.NewIter(&pebble.IterOptions{LowerBound: qp, UpperBound: keys.PrefixEnd(qp)})
	require.NoError(t, err)
	var fromQueues int64
	for ok := it.First(); ok; ok = it.Next() {
		q := new(QueueRecord)
		require.NoError(t, replica.Decode(it.Value(), q))
		for s, n := range q.Counts {
			if unfinished(job.State(s)) {
				fromQueues += n
			}
		}
		require.Equal(t, keyed[q.Name], q.Keyed, "%s: keyed pending jobs", q.Name)
		var blocked int64
		for k, c := range counts {
			if k.queue == q.Name {
				stored := readKeyCount(db, keys.KeyActive(ns, q.Name, k.ckey))
				require.Equal(t, c, stored, "%s/%s: active and pending", q.Name, k.ckey)
				blocked += c.blocked(q.KeyMax)
			}
		}
		require.Equal(t, blocked, q.Blocked, "%s: blocked", q.Name)
		blockedAll += blocked
	}
	require.NoError(t, it.Close())
	for g := range groups {
		_, closer, err := db.Get(keys.KeyedGroup(ns, g.queue, g.prio, g.fkey, g.ckey))
		require.NoError(t, err, "group %v has jobs: its key is there", g)
		closer.Close()
	}
	gp := keys.Namespace(ns)
	it, err = db.NewIter(&pebble.IterOptions{LowerBound: append(gp, keys.KindKeyedGroup), UpperBound: append(gp, keys.KindKeyedGroup+1)})
	require.NoError(t, err)
	marked := 0
	for ok := it.First(); ok; ok = it.Next() {
		marked++
	}
	require.NoError(t, it.Close())
	require.Len(t, groups, marked, "no key marks an empty group")
	if n, ok := Unfinished(db, ns); ok {
		require.Equal(t, unfinishedJobs, n, "unfinished jobs")
	}
	require.Equal(t, unfinishedJobs, fromQueues, "the queue counts agree")
	return blockedAll
}

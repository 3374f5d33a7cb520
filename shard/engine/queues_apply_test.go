package engine

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/shard/job"
	"github.com/jobbie/jobbie/shard/keys"
)

func (f *fsmBundle) queue(name string) *QueueRecord {
	q, _ := ReadQueue(f.db, testNS, name)
	return q
}

func requireNotFound(t *testing.T, res any) {
	t.Helper()
	err, ok := res.(error)
	require.True(t, ok, "want an error, got %v", res)
	require.Equal(t, apierr.NotFound, apierr.CodeOf(err))
}

func TestApplyQueuePauseResume(t *testing.T) {
	f := setupFSM(t)
	requireNotFound(t, f.apply(QueueResume.Type, &QueueCmd{NS: testNS, Queue: "q"}))
	require.Nil(t, f.apply(QueuePause.Type, &QueueCmd{NS: testNS, Queue: "q"}))
	require.True(t, f.queue("q").Paused, "pausing a new queue creates it")
	id := f.enqueue(&job.Job{Queue: "q"})
	other := f.enqueue(&job.Job{Queue: "open"})
	require.Equal(t, other, f.fetch("q", "open").ID, "a paused queue is skipped")
	require.Nil(t, f.fetch("q"))
	require.Nil(t, f.apply(QueueResume.Type, &QueueCmd{NS: testNS, Queue: "q"}))
	require.False(t, f.queue("q").Paused)
	require.Equal(t, id, f.fetch("q").ID)
}

func TestApplyQueueDrain(t *testing.T) {
	f := setupFSM(t)
	requireNotFound(t, f.apply(QueueDrain.Type, &QueueCmd{NS: testNS, Queue: "q"}))
	a := f.enqueue(&job.Job{Queue: "q"})
	f.enqueue(&job.Job{Queue: "q"})
	f.fetch("q")
	require.EqualValues(t, 1, f.apply(QueueDrain.Type, &QueueCmd{NS: testNS, Queue: "q"}))
	q := f.queue("q")
	require.True(t, q.Paused && q.Draining)
	require.Nil(t, f.fetch("q"))
	require.Equal(t, job.Completed, f.apply(Ack.Type, &AckCmd{NS: testNS, ID: a}))
	require.EqualValues(t, 0, f.queue("q").Count(job.Active))
}

func TestApplyQueueConcurrency(t *testing.T) {
	f := setupFSM(t)
	requireNotFound(t, f.apply(QueueConcurrency.Type, &QueueLimitCmd{NS: testNS, Queue: "q"}))
	require.Nil(t, f.apply(QueueConcurrency.Type, &QueueLimitCmd{NS: testNS, Queue: "q", Max: 1}))
	a := f.enqueue(&job.Job{Queue: "q"})
	b := f.enqueue(&job.Job{Queue: "q"})
	require.Equal(t, a, f.fetch("q").ID)
	require.Nil(t, f.fetch("q"), "a singleton queue hands out one job at a time")
	require.Equal(t, job.Completed, f.apply(Ack.Type, &AckCmd{NS: testNS, ID: a}))
	require.Equal(t, b, f.fetch("q").ID)
	c := f.enqueue(&job.Job{Queue: "q"})
	require.Nil(t, f.fetch("q"))
	require.Nil(t, f.apply(QueueConcurrency.Type, &QueueLimitCmd{NS: testNS, Queue: "q"}))
	require.EqualValues(t, 0, f.queue("q").MaxActive)
	require.Equal(t, c, f.fetch("q").ID)
}

func TestApplyQueueThrottle(t *testing.T) {
	f := setupFSM(t)
	requireNotFound(t, f.apply(QueueThrottle.Type, &QueueThrottleCmd{NS: testNS, Queue: "q"}))
	require.Nil(t, f.apply(QueueThrottle.Type, &QueueThrottleCmd{NS: testNS, Queue: "q", Rate: 2, Period: int64(time.Second)}))
	for i := 0; i < 5; i++ {
		f.enqueue(&job.Job{Queue: "q"})
	}
	require.NotNil(t, f.fetch("q"))
	f.advance(100 * time.Millisecond)
	require.NotNil(t, f.fetch("q"))
	require.Nil(t, f.fetch("q"), "the window is full")
	ok, retryAt := f.queue("q").canHandOut(f.now.UnixNano())
	require.False(t, ok)
	require.Greater(t, retryAt, f.now.UnixNano())
	f.advance(950 * time.Millisecond)
	require.NotNil(t, f.fetch("q"), "the first fetch left the window")
	require.Nil(t, f.fetch("q"))
	require.LessOrEqual(t, len(f.queue("q").Throttle.Slots), throttleSlices+1, "the window's state is bounded")
	require.Nil(t, f.apply(QueueThrottle.Type, &QueueThrottleCmd{NS: testNS, Queue: "q"}))
	require.Nil(t, f.queue("q").Throttle)
	require.NotNil(t, f.fetch("q"))
}

func TestApplyQueueClear(t *testing.T) {
	f := setupFSM(t)
	requireNotFound(t, f.apply(QueueClear.Type, &QueueSweepCmd{NS: testNS, Queue: "q"}))
	p := f.enqueue(&job.Job{Queue: "q", UniqueKey: "u"})
	s := f.enqueue(&job.Job{Queue: "q", ScheduledAt: f.now.Add(time.Hour).UnixNano(), ExpireAfter: int64(2 * time.Hour)})
	a := f.enqueue(&job.Job{Queue: "q"})
	keep := f.enqueue(&job.Job{Queue: "other", ScheduledAt: f.now.Add(time.Hour).UnixNano()})
	f.apply(Fetch.Type, &FetchCmd{NS: testNS, Queues: []string{"q"}, LeaseNs: int64(time.Minute)}) // p
	f.enqueue(&job.Job{Queue: "q"})
	// Step through as ClearQueue does.
	c := &QueueSweepCmd{NS: testNS, Queue: "q"}
	total := 0
	for {
		st := f.apply(QueueClear.Type, c).(*QueueStep)
		total += st.Removed
		if st.Next == nil {
			break
		}
		c.Phase, c.After = st.Phase, st.Next
	}
	require.Equal(t, 3, total, "two pending, one scheduled")
	require.Equal(t, job.Active, f.job(p).State)
	for _, id := range []string{s, a} {
		_, err := ReadJob(f.db, testNS, id)
		require.Error(t, err)
	}
	sj := f.job(keep)
	require.Equal(t, job.Scheduled, sj.State)
	require.False(t, f.has(keys.Timed(testNS, keys.KindExpire, f.now.Add(2*time.Hour).UnixNano(), s)))
	require.EqualValues(t, []int64{0, 0, 0, 1, 0, 0, 0, 0}, f.counts("q"))
	require.Nil(t, f.fetch("q"))
}

func TestApplyQueueDelete(t *testing.T) {
	f := setupFSM(t)
	requireNotFound(t, f.apply(QueueDelete.Type, &QueueSweepCmd{NS: testNS, Queue: "q"}))
	f.apply(QueueConcurrency.Type, &QueueLimitCmd{NS: testNS, Queue: "q", Max: 5})
	done := f.enqueue(&job.Job{Queue: "q"})
	f.fetch("q")
	f.apply(Ack.Type, &AckCmd{NS: testNS, ID: done})
	act := f.enqueue(&job.Job{Queue: "q"})
	f.fetch("q")
	f.enqueue(&job.Job{Queue: "q", UniqueKey: "u"})
	f.enqueue(&job.Job{Queue: "q", ScheduledAt: f.now.Add(time.Hour).UnixNano()})
	keep := f.enqueue(&job.Job{Queue: "other"})
	st := f.apply(QueueDelete.Type, &QueueSweepCmd{NS: testNS, Queue: "q"}).(*QueueStep)
	require.Equal(t, 4, st.Removed)
	require.Nil(t, st.Next)
	require.False(t, f.has(keys.Queue(testNS, "q")), "the queue record and its settings are gone")
	require.False(t, f.has(keys.Job(testNS, act)))
	require.False(t, f.has(keys.Unique(testNS, "q", "u")))
	for _, p := range [][]byte{keys.PendingQueue(testNS, "q"), keys.TimeIndex(testNS, keys.KindDue), keys.TimeIndex(testNS, keys.KindLease)} {
		it, err := f.db.NewIter(nil)
		require.NoError(t, err)
		it.SeekGE(p)
		require.False(t, it.Valid() && len(it.Key()) >= len(p) && string(it.Key()[:len(p)]) == string(p), "index %q left", p)
		require.NoError(t, it.Close())
	}
	require.Equal(t, job.Pending, f.job(keep).State)
	requireNotFound(t, f.apply(QueueResume.Type, &QueueCmd{NS: testNS, Queue: "q"}))
}

func TestApplyQueueDefaults(t *testing.T) {
	f := setupFSM(t)
	two := 2
	f.apply(QueueDefaultsSet.Type, &QueueDefaultsCmd{NS: testNS, Queue: "q", Defaults: QueueDefaults{
		MaxRetries: &two, Backoff: job.BackoffLinear, BaseDelay: int64(time.Minute), LeaseNs: int64(5 * time.Minute), Retention: int64(time.Hour)}})
	all := DefMaxRetries | DefBackoff | DefBaseDelay | DefMaxDelay
	enq := func(j *job.Job, mask uint8) *job.Job {
		j.ID = f.e.newIDForTest()
		res := f.apply(Enqueue.Type, &EnqueueCmd{NS: testNS, Jobs: [][]byte{j.Encode()}, Defaulted: []uint8{mask}}).([]EnqueueResult)
		return f.job(res[0].JobID)
	}
	base := func() *job.Job {
		return &job.Job{Queue: "q", MaxRetries: job.DefaultMaxRetries, Backoff: job.DefaultBackoff,
			BaseDelay: int64(job.DefaultBaseDelay), MaxDelay: int64(job.DefaultMaxDelay)}
	}
	j := enq(base(), all)
	require.Equal(t, 2, j.MaxRetries)
	require.Equal(t, job.BackoffLinear, j.Backoff)
	require.Equal(t, int64(time.Minute), j.BaseDelay)
	require.Equal(t, int64(job.DefaultMaxDelay), j.MaxDelay)
	// Fields the producer sent win.
	o := base()
	o.MaxRetries = 7
	j = enq(o, all&^DefMaxRetries)
	require.Equal(t, 7, j.MaxRetries)
	require.Equal(t, job.BackoffLinear, j.Backoff)
	// An entry without the field (older log) keeps what the producer built.
	j = enq(base(), 0)
	require.Equal(t, job.DefaultMaxRetries, j.MaxRetries)
	// The default lease applies when the worker asked for none.
	got := f.apply(Fetch.Type, &FetchCmd{NS: testNS, Queues: []string{"q"}, LeaseNs: int64(time.Minute), LeaseDefault: true}).(*job.Job)
	require.Equal(t, int64(5*time.Minute), got.LeaseNs)
	got = f.apply(Fetch.Type, &FetchCmd{NS: testNS, Queues: []string{"q"}, LeaseNs: int64(time.Minute)}).(*job.Job)
	require.Equal(t, int64(time.Minute), got.LeaseNs)
	require.Equal(t, time.Hour, f.e.queueRetention(f.db, testNS, "q"))
	require.Zero(t, f.e.queueRetention(f.db, testNS, "nope"))
}

func TestApplyQueueThroughput(t *testing.T) {
	f := setupFSM(t)
	for i := 0; i < 3; i++ {
		id := f.enqueue(&job.Job{Queue: "q"})
		f.fetch("q")
		f.apply(Ack.Type, &AckCmd{NS: testNS, ID: id})
		f.advance(time.Minute)
	}
	require.InDelta(t, 0.6, f.queue("q").Throughput(f.now.UnixNano()), 0.001)
	require.Zero(t, f.queue("q").Throughput(f.now.Add(10*time.Minute).UnixNano()))
}

func TestApplyQueueConfigure(t *testing.T) {
	f := setupFSM(t)
	three := 3
	full := &QueueConfigCmd{NS: testNS, Queue: "q", Description: "emails", Paused: true, Max: 2, Rate: 5, Period: int64(time.Second),
		Defaults: QueueDefaults{MaxRetries: &three, ExpireAfter: int64(time.Minute)}}
	require.Nil(t, f.apply(QueueConfigure.Type, full))
	q := f.queue("q")
	require.Equal(t, "emails", q.Description)
	require.True(t, q.Paused)
	require.EqualValues(t, 2, q.MaxActive)
	require.EqualValues(t, 5, q.Throttle.Rate)
	require.Equal(t, 3, *q.Defaults.MaxRetries)
	require.True(t, f.has(keys.Registry(testNS)))

	// The queue's expire_after applies to a job that left it out.
	ids := f.enqueueIn(testNS, &EnqueueCmd{Defaulted: []uint8{DefExpireAfter | DefMaxRetries, 0}}, &job.Job{Queue: "q"}, &job.Job{Queue: "q"})
	a, b := f.job(ids[0]), f.job(ids[1])
	require.EqualValues(t, time.Minute, a.ExpireAfter)
	require.Equal(t, f.now.Add(time.Minute).UnixNano(), a.ExpireAt)
	require.Equal(t, 3, a.MaxRetries)
	require.Zero(t, b.ExpireAfter)
	require.Zero(t, b.ExpireAt)

	// Unpaused, the throttle counts a fetch; the same throttle again keeps
	// its window, a new rate of the same period too.
	full.Paused = false
	require.Nil(t, f.apply(QueueConfigure.Type, full))
	require.NotNil(t, f.fetch("q"))
	require.Nil(t, f.apply(QueueConfigure.Type, full))
	room, _ := f.queue("q").Throttle.room(f.now.UnixNano())
	require.EqualValues(t, 4, room, "the same throttle keeps the fetch it counted")
	full.Rate = 6
	require.Nil(t, f.apply(QueueConfigure.Type, full))
	room, _ = f.queue("q").Throttle.room(f.now.UnixNano())
	require.EqualValues(t, 5, room)

	// Draining survives a configuration that keeps the queue paused; one
	// that unpauses it ends the drain, as resume does.
	require.EqualValues(t, 1, f.apply(QueueDrain.Type, &QueueCmd{NS: testNS, Queue: "q"}))
	full.Paused = true
	require.Nil(t, f.apply(QueueConfigure.Type, full))
	require.True(t, f.queue("q").Draining)
	full.Paused = false
	require.Nil(t, f.apply(QueueConfigure.Type, full))
	require.False(t, f.queue("q").Draining)

	// An empty configuration resets everything; counts stay.
	require.Nil(t, f.apply(QueueConfigure.Type, &QueueConfigCmd{NS: testNS, Queue: "q"}))
	q = f.queue("q")
	require.Empty(t, q.Description)
	require.False(t, q.Paused)
	require.Zero(t, q.MaxActive)
	require.Nil(t, q.Throttle)
	require.Nil(t, q.Defaults)
	require.EqualValues(t, 1, q.Count(job.Pending))
	require.EqualValues(t, 1, q.Count(job.Active))
}

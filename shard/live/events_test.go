package live

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/shard/engine"
	"github.com/jobbie/jobbie/shard/job"
)

// hubBundle drives an event hub through its observer, as applies do, and
// publishes each entry as its commit would.
type hubBundle struct {
	t   *testing.T
	h   *Events
	obs engine.Observer
	idx uint64
}

func setupHub(t *testing.T) *hubBundle {
	t.Helper()
	h := NewEvents()
	h.StartAt(0)
	return &hubBundle{t: t, h: h, obs: h.Observer()}
}

// entry applies one entry that moves each job of jobs (queue "q") from
// state from to state to, then publishes it.
func (b *hubBundle) entry(ns string, from, to job.State, ids ...string) {
	b.idx++
	tx := replica.NewTx(nil, time.Unix(1_800_000_000, int64(b.idx)), b.idx)
	for _, id := range ids {
		b.obs(tx, ns, &job.Job{ID: id, Queue: "q", State: to, WorkerID: "w1"}, from)
	}
	tx.RunAfterCommit()
}

func (b *hubBundle) read(ns string, after uint64) ([]Event, bool, uint64) {
	return b.h.Read(ns, after, 10_000, nil)
}

func TestEventTypes(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		from, to job.State
		want     string
	}{
		{0, job.Pending, "enqueued"}, {0, job.Scheduled, "enqueued"},
		{job.Pending, job.Active, "started"}, {job.Active, job.Completed, "completed"},
		{job.Active, job.Retrying, "failed"}, {job.Active, job.Pending, "failed"},
		{job.Active, job.Dead, "dead"}, {job.Retrying, job.Pending, "pending"},
		{job.Scheduled, job.Pending, "pending"}, {job.Dead, job.Pending, "retried"},
		{job.Pending, job.Cancelled, "cancelled"},
	} {
		require.Equal(t, c.want, eventType(c.from, c.to, false), "%s → %s", c.from, c.to)
	}
	require.Equal(t, "lease_released", eventType(job.Active, job.Pending, true))
}

func TestEventSequenceFollowsTheLog(t *testing.T) {
	t.Parallel()
	b := setupHub(t)
	b.entry(testNS, 0, job.Pending, "a", "b")
	b.entry(testNS, job.Pending, job.Active, "a")
	evs, missed, _ := b.read(testNS, 0)
	require.False(t, missed, "every event since the node started is kept")
	require.Len(t, evs, 3)
	require.Equal(t, []uint64{1 << eventSeqBits, 1<<eventSeqBits | 1, 2 << eventSeqBits}, []uint64{evs[0].Seq, evs[1].Seq, evs[2].Seq})
	require.Equal(t, "started", evs[2].Type)
	require.Equal(t, "w1", evs[2].WorkerID)

	evs, missed, _ = b.read(testNS, evs[0].Seq)
	require.False(t, missed)
	require.Equal(t, []string{"b", "a"}, []string{evs[0].JobID, evs[1].JobID}, "resume after an id")
	require.Equal(t, uint64(2<<eventSeqBits), b.h.Latest(testNS))
}

func TestEventRingDropsOldestAndReportsTheGap(t *testing.T) {
	t.Parallel()
	b := setupHub(t)
	for i := 0; i < eventRingSize+10; i++ {
		b.entry(testNS, 0, job.Pending, "j")
	}
	evs, missed, skipTo := b.read(testNS, 5<<eventSeqBits)
	require.True(t, missed, "the 10 oldest events are gone")
	require.Len(t, evs, eventRingSize)
	require.Equal(t, uint64(11<<eventSeqBits), evs[0].Seq, "starts at the oldest kept")
	require.Equal(t, uint64(10<<eventSeqBits), skipTo)

	_, missed, _ = b.read(testNS, skipTo)
	require.False(t, missed, "once past the gap, nothing more is missed")
	evs, missed, _ = b.read(testNS, uint64(eventRingSize+9)<<eventSeqBits)
	require.False(t, missed)
	require.Len(t, evs, 1)
}

func TestEventsBeforeTheNodeWatchedAreMissed(t *testing.T) {
	t.Parallel()
	h := NewEvents()
	obs := h.Observer()
	h.StartAt(41) // entries up to 41 were applied before this process
	tx := replica.NewTx(nil, time.Unix(1_800_000_000, 0), 42)
	obs(tx, testNS, &job.Job{ID: "a", Queue: "q", State: job.Pending}, 0)
	tx.RunAfterCommit()

	_, missed, _ := h.Read(testNS, 40<<eventSeqBits, 10, nil)
	require.True(t, missed, "an id from entry 40 may have had successors this node never saw")
	evs, missed, _ := h.Read(testNS, 41<<eventSeqBits|eventSeqMask, 10, nil)
	require.False(t, missed)
	require.Len(t, evs, 1)
}

func TestEventNamespacesAreApart(t *testing.T) {
	t.Parallel()
	b := setupHub(t)
	other := "t_01hx0000000000000000000001/default"
	b.entry(testNS, 0, job.Pending, "mine")
	b.entry(other, 0, job.Pending, "theirs")
	evs, _, _ := b.read(testNS, 0)
	require.Len(t, evs, 1)
	require.Equal(t, "mine", evs[0].JobID)
}

func TestSlowSubscriberNeverBlocksPublish(t *testing.T) {
	t.Parallel()
	b := setupHub(t)
	sub, err := b.h.Subscribe(testNS)
	require.NoError(t, err)
	defer b.h.Unsubscribe(sub)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; i < 5*eventRingSize; i++ { // never read by the subscriber
			b.entry(testNS, 0, job.Pending, "j")
		}
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("publishing waited on a subscriber that does not read")
	}
	require.Len(t, sub.wake, 1, "the subscriber holds one nudge, however many entries came")
	_, missed, _ := b.read(testNS, 0)
	require.True(t, missed, "it fell behind the ring and is told so when it reads")
}

func TestEventStreamsPerNamespaceAreBounded(t *testing.T) {
	t.Parallel()
	b := setupHub(t)
	for i := 0; i < maxEventStreams; i++ {
		_, err := b.h.Subscribe(testNS)
		require.NoError(t, err)
	}
	_, err := b.h.Subscribe(testNS)
	require.Error(t, err)
}

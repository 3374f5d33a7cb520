package engine

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/shard/job"
)

// detailedFSM is an fsmBundle whose log keeps the details of other
// things' events.
func detailedFSM(t *testing.T) *fsmBundle {
	f := setupFSM(t)
	f.apply(EventLogStartDetailed.Type, &EventLogStartCmd{})
	require.True(t, f.e.EventLogDetailed(f.db))
	require.True(t, f.e.EventLogWide(f.db), "detailed is wide too")
	return f
}

// batchOfFour enqueues a batch of four jobs in "work" and ends them: one
// completed, one dead, one cancelled, one deleted before it ran.
func batchOfFour(f *fsmBundle) string {
	c := &EnqueueCmd{NS: testNS, Batch: &BatchRecord{ID: "batch_01HX0000000000000000000001", CallbackQueue: "done"}}
	var ids []string
	for range 4 {
		ids = append(ids, f.e.newIDForTest())
		c.Jobs = append(c.Jobs, (&job.Job{ID: ids[len(ids)-1], Queue: "work", BatchID: c.Batch.ID, Backoff: job.BackoffNone}).Encode())
	}
	f.apply(Enqueue.Type, c)
	f.finish("work", `1`, "")
	f.finish("work", "", "")
	require.Equal(f.t, "cancelled", f.jobOp(JobCancel.Type, ids[2]))
	require.Empty(f.t, f.things(), "one member is still pending")
	require.Nil(f.t, f.jobOp(JobDiscard.Type, ids[3]))
	return c.Batch.ID
}

// batch.completed carries the batch's counts: its jobs, succeeded,
// failed (dead) and cancelled (cancelled, or deleted unfinished).
func TestEventBatchCompletedCarriesCounts(t *testing.T) {
	t.Parallel()
	f := detailedFSM(t)
	id := batchOfFour(f)
	b, err := ReadBatch(f.db, testNS, id)
	require.NoError(t, err)
	require.Equal(t, []Event{{Type: EvBatchCompleted, Subject: id, Queue: "done", JobID: b.CallbackJobID, Detail: ChainFailed,
		At: f.now.UnixNano(), Counts: []int{4, 1, 1, 2}}}, f.things())
	require.Equal(t, 3, b.Failed, "the callback's failed count is what it was: every member not completed")

	// A log from before the details: no counts, and the record as it was.
	f = wideFSM(t)
	id = batchOfFour(f)
	b, err = ReadBatch(f.db, testNS, id)
	require.NoError(t, err)
	require.Zero(t, b.Cancelled)
	require.Equal(t, []Event{{Type: EvBatchCompleted, Subject: id, Queue: "done", JobID: b.CallbackJobID, Detail: ChainFailed,
		At: f.now.UnixNano()}}, f.things())
}

// A chain whose unfinished step is deleted ends: chain.completed,
// cancelled, naming the deleted step; deleting a finished step of an
// ended chain logs nothing more. Before the details, it stopped without
// an event.
func TestEventChainEndsWhenItsStepIsDeleted(t *testing.T) {
	t.Parallel()
	ended := func(f *fsmBundle) []string {
		var out []string
		for _, ev := range f.things() {
			require.Equal(t, EvChainCompleted, ev.Type)
			out = append(out, ev.Subject+" "+ev.Queue+" "+ev.Detail)
		}
		return out
	}
	const chain = "chain_01HX0000000000000000000001"
	f := detailedFSM(t)
	chainJob(f, false)
	s1 := f.finish("s1", `1`, "")
	s2 := f.pendingIn("s2")
	require.Len(t, s2, 1)
	require.Empty(t, f.things(), "the chain is not over")
	require.Nil(t, f.jobOp(JobDiscard.Type, s2[0].ID))
	require.Equal(t, []string{chain + " s2 " + ChainCancelled}, ended(f))
	require.Equal(t, s2[0].ID, f.things()[0].JobID)
	require.Nil(t, f.jobOp(JobDiscard.Type, s1.ID))
	require.Len(t, f.things(), 1, "a finished step deleted: nothing more")

	// The first step, deleted by clearing its queue.
	f = detailedFSM(t)
	chainJob(f, false)
	f.apply(QueueClearAll.Type, &QueueCmd{NS: testNS, Queue: "s1"})
	require.Equal(t, []string{chain + " s1 " + ChainCancelled}, ended(f))

	// A step cancelled before it ran ends it too.
	f = detailedFSM(t)
	id := chainJob(f, false)
	require.Equal(t, "cancelled", f.jobOp(JobCancel.Type, id))
	require.Equal(t, []string{chain + " s1 " + ChainCancelled}, ended(f))

	f = wideFSM(t)
	chainJob(f, false)
	f.finish("s1", `1`, "")
	require.Nil(t, f.jobOp(JobDiscard.Type, f.pendingIn("s2")[0].ID))
	require.Empty(t, f.things(), "a log from before the details: no event")
}

// The details' switch turns the log on and wide when it is off, and is
// a no-op once applied; the start record says so to a reader. The
// counted switch and it each keep what the other set, in either order.
func TestEventLogDetailedSwitch(t *testing.T) {
	t.Parallel()
	f := setupFSM(t)
	require.False(t, f.e.EventLogDetailed(f.db))
	f.apply(EventLogStartWide.Type, &EventLogStartCmd{})
	start, wide, _, ok := readEventStart(f.db)
	require.True(t, ok && wide)
	require.False(t, f.e.EventLogDetailed(f.db))
	f.apply(EventLogStartDetailed.Type, &EventLogStartCmd{})
	f.apply(EventLogStartDetailed.Type, &EventLogStartCmd{})
	again, wide, counted, ok := readEventStart(f.db)
	require.True(t, ok && wide)
	require.False(t, counted)
	require.Equal(t, start, again, "the log's start stays")
	require.EqualValues(t, eventLogDetailedMarker, eventLogLevel(f.db))
	f.apply(EventLogStartWide.Type, &EventLogStartCmd{})
	require.EqualValues(t, eventLogDetailedMarker, eventLogLevel(f.db), "never back")
	f.apply(EventLogStartCounted.Type, &EventLogStartCmd{})
	again, wide, counted, ok = readEventStart(f.db)
	require.True(t, ok && wide && counted)
	require.Equal(t, start, again)
	require.EqualValues(t, eventLogDetailedMarker, eventLogLevel(f.db), "counting keeps the details")

	f = setupFSM(t)
	f.apply(EventLogStartCounted.Type, &EventLogStartCmd{})
	f.apply(EventLogStartDetailed.Type, &EventLogStartCmd{})
	_, wide, counted, ok = readEventStart(f.db)
	require.True(t, ok && wide && counted, "the details keep the count")
	require.True(t, f.e.EventLogDetailed(f.db))
	require.True(t, f.e.EventLogCounted(f.db))
}

// Counts read back whole; an event without them has the bytes of a log
// before them.
func TestEventEncodingOfCounts(t *testing.T) {
	t.Parallel()
	ev := Event{Type: EvBatchCompleted, Subject: "b", Detail: ChainFailed, At: 3, Counts: []int{4, 1, 1, 2}}
	var got Event
	require.True(t, decodeEvent(appendEvent(nil, &ev), &got))
	require.Equal(t, ev, got)
	without := ev
	without.Counts = nil
	require.Equal(t, appendEvent(nil, &ev)[:len(appendEvent(nil, &without))], appendEvent(nil, &without))
	got = Event{Counts: []int{9}}
	require.True(t, decodeEvent(appendEvent(nil, &without), &got))
	require.Nil(t, got.Counts)
}

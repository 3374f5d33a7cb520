package engine

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/shard/job"
	"github.com/jobbie/jobbie/shard/keys"
)

// startLog starts the event log counted and in blocks, and kept when kept.
func (f *fsmBundle) startLog(kept bool) {
	f.t.Helper()
	f.apply(EventLogStartCounted.Type, &EventLogStartCmd{})
	f.apply(EventLogStartBlocks.Type, &EventLogStartCmd{})
	if kept {
		f.apply(EventLogStartKept.Type, &EventLogStartCmd{})
		require.True(f.t, f.e.EventLogKept(f.db))
	}
}

// eventLogRecs is the keys of ns's event log in its records, relative to it.
func (f *fsmBundle) eventLogRecs(ns string) []string {
	var out []string
	for k := range f.records(ns) {
		if keys.IsEvent([]byte(k)) {
			out = append(out, k)
		}
	}
	return out
}

// The kept start is a no-op until the log writes blocks, and keeps the
// switches before it.
func TestEventLogStartKeptAfterBlocks(t *testing.T) {
	t.Parallel()
	f := setupFSM(t)
	f.apply(EventLogStartCounted.Type, &EventLogStartCmd{})
	f.apply(EventLogStartKept.Type, &EventLogStartCmd{})
	require.False(t, f.e.EventLogKept(f.db), "a no-op before the blocks")
	f.apply(EventLogStartBlocks.Type, &EventLogStartCmd{})
	f.apply(EventLogStartKept.Type, &EventLogStartCmd{})
	require.True(t, f.e.EventLogKept(f.db))
	require.True(t, f.e.EventLogBlocks(f.db))
	require.True(t, f.e.EventLogCounted(f.db))
	f.apply(EventLogStartDetailed.Type, &EventLogStartCmd{}) // rewrites the record: the kept byte stays
	f.e.reset()
	require.True(t, eventLogKept(f.db))
}

// A restore's abort keeps the floor its begin raised: a reader resuming
// from an event the begin wiped is told it missed events, before and
// after the namespace logs new ones. A log from before the kept start
// replays as it first applied: the abort deletes the floor.
func TestRestoreAbortKeepsTheEventFloor(t *testing.T) {
	t.Parallel()
	for _, kept := range []bool{true, false} {
		f := setupFSM(t)
		f.startLog(kept)
		f.enqueue(&job.Job{Queue: "q"})
		f.enqueue(&job.Job{Queue: "q"})
		evs, _, _ := f.events(0)
		require.Len(t, evs, 2)
		require.Nil(t, f.apply(RestoreBegin.Type, &RestoreBeginCmd{NS: testNS, Token: "t", Replace: true}))
		_, missed, _ := f.events(evs[0].Seq)
		require.True(t, missed, "the begin raised the floor")
		require.Nil(t, f.apply(RestoreAbort.Type, &RestoreTokenCmd{NS: testNS, Token: "t"}))
		_, missed, _ = f.events(evs[0].Seq)
		require.Equal(t, kept, missed, "after the abort (kept %v)", kept)
		f.enqueue(&job.Job{Queue: "q"})
		got, missed, _ := f.events(evs[0].Seq)
		require.Len(t, got, 1)
		require.Equal(t, kept, missed, "with a new event (kept %v)", kept)
		if kept {
			// A stream that starts now reads from the floor on, and
			// misses nothing.
			_, missed, _ = f.events(got[0].Seq - 1)
			require.False(t, missed)
		}
	}
}

// The abort of a move that ended (nothing touched the namespace since)
// keeps the floor too: the events of the namespace before the move's
// begin, and those its loops wrote after the end, are gone. A floor is
// not data: a move into the namespace begins again.
func TestMoveAbortAfterEndKeepsTheEventFloor(t *testing.T) {
	t.Parallel()
	for _, kept := range []bool{true, false} {
		f := setupFSM(t)
		f.startLog(kept)
		f.enqueue(&job.Job{Queue: "q"})
		evs, _, _ := f.events(0)
		require.Len(t, evs, 1)
		require.Nil(t, f.apply(RestoreBegin.Type, &RestoreBeginCmd{NS: testNS, Token: "mv", Replace: true}))
		require.Nil(t, f.apply(MoveChunk.Type, &MoveChunkCmd{NS: testNS, Token: "mv", Recs: []RestoreRecord{
			{Key: keys.Queue("", "a")[1:], Value: replica.Encode(&QueueRecord{Name: "a", Counts: make([]int64, 8)})},
		}}))
		f.apply(MoveEndMarked.Type, &RestoreTokenCmd{NS: testNS, Token: "mv"})
		require.Nil(t, f.abortMove(testNS, "mv"))
		_, missed, _ := f.events(evs[0].Seq)
		require.Equal(t, kept, missed, "kept %v", kept)
		require.Equal(t, kept, f.has(keys.EventFloor(testNS)))

		// The floor is not data: the move begins again.
		require.False(t, HasData(f.db, testNS))
		require.Nil(t, f.apply(RestoreBegin.Type, &RestoreBeginCmd{NS: testNS, Token: "mv2"}), "kept %v", kept)
	}
}

// A restore from a hand-made backup that holds the keys of an event log
// (events, floor, count, retention) writes none of them, as no backup
// is written with them (keys.IsEvent); a move's chunk deletes none. A log
// from before the kept start replays as it first applied: it wrote them.
func TestRestoreSkipsEventLogKeys(t *testing.T) {
	t.Parallel()
	logRecs := []RestoreRecord{
		{Key: keys.Event("", 5)[1:], Value: appendEvent(nil, &Event{Type: "enqueued", JobID: "x", Queue: "q"})},
		{Key: keys.EventFloor("")[1:], Value: make([]byte, 8)},
		{Key: keys.EventCount("")[1:], Value: []byte{1}},
		{Key: keys.EventRetention("")[1:], Value: []byte{1}},
	}
	for _, kept := range []bool{true, false} {
		f := setupFSM(t)
		f.startLog(kept)
		require.Nil(t, f.apply(RestoreBegin.Type, &RestoreBeginCmd{NS: restoreNS, Token: "t"}))
		require.Nil(t, f.apply(RestoreChunk.Type, &RestoreChunkCmd{NS: restoreNS, Token: "t", Recs: append([]RestoreRecord{
			{Key: keys.Queue("", "a")[1:], Value: replica.Encode(&QueueRecord{Name: "a", Counts: make([]int64, 8)})},
		}, logRecs...)}))
		f.apply(RestoreEnd.Type, &RestoreTokenCmd{NS: restoreNS, Token: "t"})
		require.True(t, f.has(keys.Queue(restoreNS, "a")), "the other records are restored")
		if kept {
			require.Empty(t, f.eventLogRecs(restoreNS))
		} else {
			require.Len(t, f.eventLogRecs(restoreNS), len(logRecs))
		}

		// A move's chunk that names the floor to delete leaves it.
		f.enqueueIn(restoreNS, &EnqueueCmd{}, &job.Job{Queue: "q"})
		require.Nil(t, f.apply(RestoreBegin.Type, &RestoreBeginCmd{NS: restoreNS, Token: "mv", Replace: true}))
		require.True(t, f.has(keys.EventFloor(restoreNS)), "the begin raised the floor")
		require.Nil(t, f.apply(MoveChunk.Type, &MoveChunkCmd{NS: restoreNS, Token: "mv", Recs: logRecs[:1],
			Dels: [][]byte{keys.EventFloor("")[1:]}}))
		require.Equal(t, kept, f.has(keys.EventFloor(restoreNS)), "kept %v", kept)
		require.Equal(t, !kept, f.has(keys.Event(restoreNS, 5)), "kept %v", kept)
	}
}

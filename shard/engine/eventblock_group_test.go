package engine

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/cockroachdb/pebble"
	"github.com/cockroachdb/pebble/vfs"
	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/replica"
)

// groupRun is the state and the outcomes of entries applied after the
// log's counted and blocks starts, on a node of its own.
type groupRun struct {
	dump string
	outs []string // each command's outcome, entry by entry
}

// applyEntries applies the entries of before one by one, then those of
// entries one by one, or all in one batch as a node catching up does,
// with the purge's step set to step.
func applyEntries(t *testing.T, before, entries [][][]byte, step int, oneGroup bool) groupRun {
	t.Helper()
	now := time.Unix(1_800_000_000, 0).UTC()
	db, err := pebble.Open("", &pebble.Options{FS: vfs.NewMem()})
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	e := New(Options{})
	e.purgeStep = step
	reg := e.Registry()
	commit := func(txs []*replica.Tx, b *pebble.Batch) {
		for _, tx := range txs {
			tx.RunBeforeCommit()
		}
		require.NoError(t, b.Commit(pebble.NoSync))
		require.NoError(t, b.Close())
	}
	var run groupRun
	apply := func(tx *replica.Tx, cmds [][]byte) {
		for _, c := range cmds {
			v, err := reg.Apply(tx, c) // refusals here write nothing: the test's entries need no redo
			run.outs = append(run.outs, fmt.Sprintf("%d: %+v %v", tx.Index, v, err))
		}
	}
	for i, cmds := range before {
		b := db.NewIndexedBatch()
		tx := replica.NewTx(b, now, uint64(1+i))
		apply(tx, cmds)
		commit([]*replica.Tx{tx}, b)
	}
	run.outs = run.outs[:0]
	b := db.NewIndexedBatch()
	var txs []*replica.Tx
	for i, cmds := range entries {
		tx := replica.NewTx(b, now, uint64(1+len(before)+i))
		apply(tx, cmds)
		txs = append(txs, tx)
		if !oneGroup {
			commit(txs, b)
			b, txs = db.NewIndexedBatch(), nil
		}
	}
	commit(txs, b)

	run.dump = string(dump(t, db))
	return run
}

// A purge's step counts the keys it deletes from the state: the events
// and the count an earlier entry of the same batch holds are among them,
// as they are on a node that applied that entry alone, so both delete
// the same keys and answer the same.
func TestEventBlocksPurgeStepAlikeInOneGroup(t *testing.T) {
	t.Parallel()
	mk := &fsmBundle{t: t, e: New(Options{})}
	pause := QueuePause.Command(&QueueCmd{NS: testNS, Queue: "q"})
	resume := QueueResume.Command(&QueueCmd{NS: testNS, Queue: "q"})
	before := [][][]byte{ // the jobs gone, their queue's records stay
		{EventLogStartCounted.Command(&EventLogStartCmd{})},
		{EventLogStartBlocks.Command(&EventLogStartCmd{})},
		{mk.enqueueCmd(3)},
		{NamespacePurge.Command(&NamespacePurgeCmd{NS: testNS})},
	}
	entries := [][][]byte{ // queue.paused events, then purge steps
		{pause, resume, pause},
		{resume, pause},
	}
	for range 6 {
		entries = append(entries, [][]byte{NamespacePurge.Command(&NamespacePurgeCmd{NS: testNS, Phase: 1})})
	}
	for _, step := range []int{1, 2, 3, 4, 10_000} {
		for n := 3; n <= len(entries); n++ { // the state after each purge step
			one := applyEntries(t, before, entries[:n], step, false)
			group := applyEntries(t, before, entries[:n], step, true)
			require.Equal(t, one.dump, group.dump, "the state after %d entries, step %d", n, step)
			require.Equal(t, one.outs, group.outs, "the purge's answers, step %d", step)
		}
	}
}

// A log of single events then blocks, trimmed at every event and in the
// gaps between entries: the reads after any cursor, the count, the
// newest event and the trim points by count hold exactly the events
// after the trim, across the switch.
func TestEventTrimsAcrossTheBlocksSwitch(t *testing.T) {
	t.Parallel()
	build := func() (*fsmBundle, []Event) {
		f := setupFSM(t)
		f.apply(EventLogStartCounted.Type, &EventLogStartCmd{})
		f.loc.Apply(f.now, f.enqueueCmd(3))
		f.loc.Apply(f.now, f.enqueueCmd(1))
		f.apply(EventLogStartBlocks.Type, &EventLogStartCmd{})
		for _, n := range []int{5, 1, 4} {
			f.loc.Apply(f.now, f.enqueueCmd(n))
		}
		evs, _, _ := f.events(0)
		require.Len(t, evs, 14)
		return f, evs
	}
	_, all := build()
	var points []uint64 // every event, and the gap after each
	for _, ev := range all {
		points = append(points, ev.Seq, ev.Seq+7)
	}
	cursors := append([]uint64{0, all[0].Seq - 1}, points...)
	after := func(evs []Event, seq uint64) []Event {
		var out []Event
		for _, ev := range evs {
			if ev.Seq > seq {
				out = append(out, ev)
			}
		}
		return out
	}
	for _, through := range points {
		f, evs := build()
		require.Equal(t, 1, f.apply(EventTrim.Type, &EventTrimCmd{NS: testNS, Through: through}), "trim through %x", through)
		left := after(evs, through)
		require.EqualValues(t, len(left), f.eventCount(), "the count after a trim through %x", through)
		for _, c := range cursors {
			got, missed, _ := f.e.ReadEvents(f.db, testNS, c, 10_000, nil)
			require.Equal(t, after(left, c), got, "resume after %x, trimmed through %x", c, through)
			require.Equal(t, c < through, missed, "resume after %x, trimmed through %x", c, through)
			two, _, _ := f.e.ReadEvents(f.db, testNS, c, 2, nil)
			require.Equal(t, after(left, c)[:min(2, len(after(left, c)))], two)
		}
		latest := through
		if len(left) > 0 {
			latest = left[len(left)-1].Seq
		}
		require.Equal(t, latest, f.e.LatestEvent(f.db, testNS), "trimmed through %x", through)
		for k := 1; k < len(left); k++ {
			want := left[len(left)-k-1].Seq
			for _, count := range []int64{int64(len(left)), -1} {
				at, ok := EventTrimPoint(f.db, testNS, EventRetention{MaxAge: 1 << 62, MaxCount: k}, f.now.UnixNano(), 1000, count)
				require.True(t, ok)
				require.Equal(t, want, at, "keep %d of %d (count %d), trimmed through %x", k, len(left), count, through)
			}
		}
	}
}

// A cursor past every number a log can hold (a client's Last-Event-ID of
// 2^64-1, whose next would wrap to 0) reads nothing and walks at most one
// key, not the namespace's whole log on every wake of its stream.
func TestEventResumeAtTheLastNumbers(t *testing.T) {
	t.Parallel()
	f := setupFSM(t)
	f.apply(EventLogStartCounted.Type, &EventLogStartCmd{})
	f.apply(EventLogStartBlocks.Type, &EventLogStartCmd{})
	for range 200 {
		f.loc.Apply(f.now, f.enqueueCmd(2))
	}
	for _, after := range []uint64{math.MaxUint64, math.MaxUint64 - 1} {
		evs, missed, _ := f.e.ReadEvents(f.db, testNS, after, 10, nil)
		require.Empty(t, evs)
		require.False(t, missed)
		x := newEventIter(f.db, testNS)
		require.False(t, x.seekAfter(after))
		steps := x.it.Stats().ForwardStepCount[pebble.InterfaceCall]
		x.close()
		require.LessOrEqual(t, steps, 2, "keys walked to resume after %d", after)
	}
}

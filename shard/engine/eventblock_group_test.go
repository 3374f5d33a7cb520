package engine

import (
	"bytes"
	"fmt"
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

	var buf bytes.Buffer
	it, err := db.NewIter(nil)
	require.NoError(t, err)
	for it.First(); it.Valid(); it.Next() {
		fmt.Fprintf(&buf, "%x=%x\n", it.Key(), it.Value())
	}
	require.NoError(t, it.Close())
	run.dump = buf.String()
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

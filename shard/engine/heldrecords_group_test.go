package engine

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// A purge's phase-1 step counts the namespace's keys: the queue records,
// the unfinished count and the history buckets that earlier entries of the
// same batch changed and hold in memory are among them, as they are on a
// node that applied those entries alone, so both delete the same keys and
// answer the same after every step.
func TestPurgeStepCountsHeldRecordsAlikeInOneGroup(t *testing.T) {
	t.Parallel()
	mk := &fsmBundle{t: t, e: New(Options{})}
	before := [][][]byte{
		{HistoryStart.Command(&HistoryStartCmd{})},
	}
	entries := [][][]byte{
		{mk.enqueueCmd(3)}, // queue q's record, the unfinished count, q's buckets
		{NamespacePurge.Command(&NamespacePurgeCmd{NS: testNS})}, // the jobs go: counts change again
		{QueuePause.Command(&QueueCmd{NS: testNS, Queue: "q2"})}, // a record of its own
		{HistorySample.Command(&HistorySampleCmd{NS: testNS, Samples: []QueueSample{{Queue: "q3", Depth: 2}}})},
	}
	for range 8 {
		entries = append(entries, [][]byte{NamespacePurge.Command(&NamespacePurgeCmd{NS: testNS, Phase: 1})})
	}
	for _, step := range []int{1, 2, 3, 4, 10_000} {
		for n := 5; n <= len(entries); n++ { // the state after each phase-1 step
			one := applyEntries(t, before, entries[:n], step, false)
			group := applyEntries(t, before, entries[:n], step, true)
			require.Equal(t, one.dump, group.dump, "the state after %d entries, step %d", n, step)
			require.Equal(t, one.outs, group.outs, "the purge's answers after %d entries, step %d", n, step)
		}
	}
}

// A restore into a namespace that is not empty is refused: a queue record
// an earlier entry of the same batch holds makes it not empty, as it does
// on a node that applied that entry alone.
func TestRestoreBeginSeesHeldRecordsInOneGroup(t *testing.T) {
	t.Parallel()
	const ns = "t_01hx0000000000000000000000/other"
	entries := [][][]byte{
		{QueuePause.Command(&QueueCmd{NS: ns, Queue: "q"})},
		{RestoreBegin.Command(&RestoreBeginCmd{NS: ns, Token: "tok"})},
	}
	one := applyEntries(t, nil, entries, purgeStepKeys, false)
	group := applyEntries(t, nil, entries, purgeStepKeys, true)
	require.Contains(t, one.outs[1], "already holds data")
	require.Equal(t, one.outs, group.outs, "the restore's answer")
	require.Equal(t, one.dump, group.dump)
}

package live

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/shard/job"
)

// An entry applied again is a new Tx: what the first attempt staged is
// never published, and the second attempt numbers its events from zero.
func TestAnEntryAppliedAgainPublishesOnlyItsLastAttempt(t *testing.T) {
	t.Parallel()
	b := setupHub(t)
	now := time.Unix(1_800_000_000, 0)
	first := replica.NewTx(nil, now, 7)
	b.obs(first, testNS, &job.Job{ID: "dropped", Queue: "q", State: job.Pending}, job.New)
	// The replica drops the first attempt (its after-commit functions never
	// run) and applies the entry again.
	again := replica.NewTx(nil, now, 7)
	b.obs(again, testNS, &job.Job{ID: "kept", Queue: "q", State: job.Pending}, job.New)
	again.RunAfterCommit()

	evs, _, _ := b.read(testNS, 0)
	require.Len(t, evs, 1)
	require.Equal(t, "kept", evs[0].JobID)
	require.Equal(t, uint64(7<<eventSeqBits), evs[0].Seq, "numbered from the start of the entry")
}

// Buffers go back to the stage once published and are reused, emptied.
func TestStageReusesItsBuffers(t *testing.T) {
	t.Parallel()
	var got [][]int
	st := &stage[int]{publish: func(v []int) { got = append(got, append([]int(nil), v...)) }}
	now := time.Unix(1_800_000_000, 0)
	for i := range 3 {
		tx := replica.NewTx(nil, now, uint64(i+1))
		require.Zero(t, st.len(tx))
		st.add(tx, i)
		st.add(tx, i*10)
		require.Equal(t, 2, st.len(tx))
		tx.RunAfterCommit()
	}
	require.Equal(t, [][]int{{0, 0}, {1, 10}, {2, 20}}, got)
	require.Len(t, st.free, 1, "one buffer served every entry")

	big := replica.NewTx(nil, now, 9)
	for i := range maxKeptStage + 1 {
		st.add(big, i)
	}
	big.RunAfterCommit()
	require.Empty(t, st.free, "an outsized buffer is not kept")
}

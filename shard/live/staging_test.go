package live

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/replica"
)

// An entry applied again is a new Tx: what the first attempt staged is
// never published.
func TestAnEntryAppliedAgainPublishesOnlyItsLastAttempt(t *testing.T) {
	t.Parallel()
	var got [][]string
	st := &stage[string]{publish: func(v []string) { got = append(got, append([]string(nil), v...)) }}
	now := time.Unix(1_800_000_000, 0)
	first := replica.NewTx(nil, now, 7)
	st.add(first, "dropped")
	// The replica drops the first attempt (its after-commit functions never
	// run) and applies the entry again.
	again := replica.NewTx(nil, now, 7)
	require.Zero(t, st.len(again), "the second attempt starts with nothing")
	st.add(again, "kept")
	again.RunAfterCommit()
	require.Equal(t, [][]string{{"kept"}}, got)
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

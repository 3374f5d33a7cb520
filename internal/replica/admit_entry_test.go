package replica

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// An entry holds at most maxBytes of command cost, except that its first
// command goes in whatever it costs: a command larger than the bound
// makes an entry of its own.
func TestAdmissionEntryTakesAtMostItsBytes(t *testing.T) {
	t.Parallel()
	q := queueOf(true, 100, 100, nil)
	fill(t, q, "a", 10) // 100 bytes each, cost 164
	batch, left := q.take(512, 3*164)
	require.Len(t, batch, 3)
	require.Equal(t, 7, left)
	batch, _ = q.take(512, 100)
	require.Len(t, batch, 1, "the first command always goes in")

	// With two keys the bound holds as well, turns and all.
	fill(t, q, "b", 10)
	for left > 0 {
		batch, left = q.take(512, 4*164)
		require.LessOrEqual(t, len(batch), 4)
		require.NotEmpty(t, batch)
	}
}

// A key waiting while a flood of tiny commands fills entries
// (a turn's quantum holds far more of them than an entry) goes in the
// very next entry: the entry a turn fills ends that turn, so a key waits
// at most one entry for its turn. Before, the flood's turn went on
// through the next ~60 entries.
func TestAdmissionAKeyWaitsAtMostOneEntryForItsTurn(t *testing.T) {
	t.Parallel()
	q := queueOf(true, 4000, 4000, nil)
	fill(t, q, "a", 2000) // cost 164 each: ~100 a quantum
	fill(t, q, "b", 1)
	batch, _ := q.take(4, noBytes) // a's turn, cut short by the entry
	require.Equal(t, map[string]int{"a": 4}, counts(batch))
	batch, _ = q.take(4, noBytes)
	require.Equal(t, 1, counts(batch)["b"], "b goes in the next entry: %v", counts(batch))

	// And what a cut turn did not spend is kept up to a quantum, so the
	// flood keeps its share: over many entries a and b alternate.
	fill(t, q, "b", 400)
	got := map[string]int{}
	for i := 0; i < 50; i++ {
		batch, _ = q.take(4, noBytes)
		for k, n := range counts(batch) {
			got[k] += n
		}
	}
	require.InDelta(t, got["a"], got["b"], 8, "equal commands, equal shares: %v", got)
}

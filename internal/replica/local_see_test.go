package replica

import (
	"testing"
	"time"

	"github.com/cockroachdb/pebble"
	"github.com/stretchr/testify/require"
)

// SeeBatches shows each group's batch as it commits, refused commands'
// writes left out: those batches committed into an empty store make the
// same state.
func TestLocalSeesEachGroupsBatch(t *testing.T) {
	t.Parallel()
	db := memDB(t)
	loc, err := NewLocal(db, (&ledger{}).registry())
	require.NoError(t, err)
	var seen [][]byte
	loc.SeeBatches(func(repr []byte) { seen = append(seen, append([]byte(nil), repr...)) })
	now := time.Unix(1_800_000_000, 0)
	loc.Apply(now, opPut.Command(&putCmd{Key: "a"}), opPut.Command(&putCmd{Key: "b", Fail: true}))
	loc.Apply(now, opPut.Command(&putCmd{Key: "c"}))
	loc.SeeBatches(nil)
	loc.Apply(now, opPut.Command(&putCmd{Key: "d"}))
	require.Len(t, seen, 2, "one batch a group, none after SeeBatches(nil)")

	copyDB := memDB(t)
	for _, repr := range seen {
		b := copyDB.NewBatch()
		require.NoError(t, b.SetRepr(repr))
		require.NoError(t, b.Commit(pebble.NoSync))
	}
	for k, want := range map[string]bool{"a": true, "b": false, "c": true, "d": false} {
		require.Equal(t, want, has(copyDB, k), "key %s", k)
	}
}

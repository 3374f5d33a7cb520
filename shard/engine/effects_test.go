package engine

import (
	"bytes"
	"testing"

	"github.com/cockroachdb/pebble"
	"github.com/cockroachdb/pebble/vfs"
	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/replica"
)

// A member that applies each entry's batch as the leader built it, instead
// of running the commands (replica.Config.Effects), ends with the same
// bytes: every handler writes through its entry's batch and nowhere else.
func TestBatchesCarryEveryEffect(t *testing.T) {
	t.Parallel()
	for seed := int64(1); seed <= 3; seed++ {
		log, _ := makeScript(seed, 400)
		leader, err := pebble.Open("", &pebble.Options{FS: vfs.NewMem()})
		require.NoError(t, err)
		member, err := pebble.Open("", &pebble.Options{FS: vfs.NewMem()})
		require.NoError(t, err)
		loc, err := replica.NewLocal(leader, newScriptEngine().Registry())
		require.NoError(t, err)
		loc.SeeBatches(func(repr []byte) {
			b := member.NewBatch()
			require.NoError(t, b.SetRepr(bytes.Clone(repr)))
			require.NoError(t, b.Commit(pebble.NoSync))
		})
		for _, e := range log {
			loc.Apply(e.now, e.cmds...)
		}
		a, b := dump(t, leader), dump(t, member)
		require.NotEmpty(t, a)
		require.True(t, bytes.Equal(a, b), "seed %d: the member applying batches diverged", seed)
		require.NoError(t, leader.Close())
		require.NoError(t, member.Close())
	}
}

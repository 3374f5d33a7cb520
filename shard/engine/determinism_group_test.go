package engine

import (
	"math/rand"
	"testing"
	"time"

	"github.com/cockroachdb/pebble"
	"github.com/cockroachdb/pebble/vfs"
	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/replica"
)

// replayGroups applies the script as a node catching up does: runs of
// entries (1 to 16, by seed) in one batch each, every entry its own Tx.
// A refused command makes the run start again without it from the
// committed state, the caches dropped: the replica does so for one that
// wrote, and one that did not left nothing behind, so either way the
// state is the one the replica's group apply ends with.
func replayGroups(t *testing.T, log []entry, seed int64) []byte {
	t.Helper()
	db, err := pebble.Open("", &pebble.Options{FS: vfs.NewMem()})
	require.NoError(t, err)
	defer db.Close()
	eng := newScriptEngine()
	reg := eng.Registry()
	rng := rand.New(rand.NewSource(seed))
	var lastNow time.Time
	for i := 0; i < len(log); {
		run := log[i:min(len(log), i+1+rng.Intn(16))]
		refused := map[[2]int]bool{}
	try:
		for {
			b := db.NewIndexedBatch()
			txs := make([]*replica.Tx, len(run))
			now := lastNow
			for k, en := range run {
				if en.now.After(now) {
					now = en.now
				}
				txs[k] = replica.NewTx(b, now, uint64(i+k+1))
				for j, c := range en.cmds {
					if refused[[2]int{k, j}] {
						continue
					}
					if _, err := reg.Apply(txs[k], c); err != nil {
						refused[[2]int{k, j}] = true
						require.NoError(t, b.Close())
						eng.reset()
						continue try
					}
				}
			}
			for _, tx := range txs {
				tx.RunBeforeCommit()
			}
			require.NoError(t, b.Commit(pebble.NoSync))
			require.NoError(t, b.Close())
			for _, tx := range txs {
				tx.RunAfterCommit()
			}
			lastNow = now
			break
		}
		i += len(run)
	}
	return dump(t, db)
}

// A node that applies the log in batches of several entries (catching
// up, replaying its log after a restart) ends with the same bytes as one
// that applied it entry by entry: the event blocks and counts held
// across an entry's end included, with the log kept (restores, moves).
func TestRandomLogsApplyAlikeInGroups(t *testing.T) {
	t.Parallel()
	for seed := int64(1); seed <= 3; seed++ {
		log, used := makeScript(seed, 400)
		require.True(t, used[EventLogStartBlocks.Type])
		require.True(t, used[EventLogStartKept.Type])
		one, groups := replay(t, log), replayGroups(t, log, seed)
		require.NotEmpty(t, one)
		require.Equal(t, string(one), string(groups), "seed %d: a node applying groups diverged", seed)
	}
}

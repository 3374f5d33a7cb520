package engine

import (
	"bytes"
	"math/rand"
	"slices"
	"testing"
	"time"

	"github.com/cockroachdb/pebble"
	"github.com/cockroachdb/pebble/vfs"
	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/replica"
)

var scriptCommands = slices.Concat(scriptJobCommands, scriptMoreCommands)

// entry is one log entry of the script: its clock and commands.
type entry struct {
	now  time.Time
	cmds [][]byte
}

// makeScript makes a script of entries. It starts a minute before an hour
// (1_800_000_000 is one) so that usage meters cross it, and its first
// entry starts metering, which most of the script then exercises.
func makeScript(seed int64, entries int) ([]entry, map[replica.CommandType]bool) {
	s := &script{rng: rand.New(rand.NewSource(seed)), now: time.Unix(1_800_000_000-60, 0).UTC(), types: map[replica.CommandType]bool{}}
	out := make([]entry, 0, entries)
	for i := range entries {
		s.now = s.now.Add(time.Duration(s.rng.Intn(700)) * time.Millisecond)
		s.times = append(s.times, s.now)
		e := entry{now: s.now}
		if i == 0 {
			e.cmds = append(e.cmds, UsageSweep.Command(&UsageSweepCmd{}))
		}
		for len(e.cmds) < 1+s.rng.Intn(8) {
			if c := s.command(); c != nil {
				e.cmds = append(e.cmds, c)
			}
		}
		out = append(out, e)
	}
	return out, s.types
}

// replay applies the script to a fresh engine and returns every key and
// value of its state, in order.
func replay(t *testing.T, log []entry) []byte { return replayCaches(t, log, false) }

// replayCaches is replay, with the engine's caches dropped before every
// entry when cold (as a snapshot restore drops them).
func replayCaches(t *testing.T, log []entry, cold bool) []byte {
	t.Helper()
	db, err := pebble.Open("", &pebble.Options{FS: vfs.NewMem()})
	require.NoError(t, err)
	defer db.Close()
	eng := newScriptEngine()
	loc, err := replica.NewLocal(db, eng.Registry())
	require.NoError(t, err)
	for _, e := range log {
		if cold {
			eng.reset()
		}
		loc.Apply(e.now, e.cmds...)
	}
	require.Zero(t, loc.Redos(), "a refused command had written before refusing")
	return dump(t, db)
}

// Two fresh state machines applying the same log end with the same bytes:
// a random script of every command type, several seeds.
func TestRandomLogsApplyDeterministically(t *testing.T) {
	t.Parallel()
	for seed := int64(1); seed <= 3; seed++ {
		log, _ := makeScript(seed, 400)
		a, b := replay(t, log), replay(t, log)
		require.NotEmpty(t, a)
		require.True(t, bytes.Equal(a, b), "seed %d: two replicas diverged", seed)
	}
}

// The caches only spare reads: a replica whose caches start empty at every
// entry (one restored from a snapshot, over and over) ends with the same
// bytes as one that kept them. Purges drop cached state as they go.
func TestCachesNeverChangeTheState(t *testing.T) {
	t.Parallel()
	for seed := int64(1); seed <= 3; seed++ {
		log, _ := makeScript(seed, 400)
		warm, cold := replayCaches(t, log, false), replayCaches(t, log, true)
		require.True(t, bytes.Equal(warm, cold), "seed %d: a replica with cold caches diverged", seed)
	}
}

// The registry holds every command the engine defines, and the scripts
// above exercise every one of them.
func TestRegistryCoversEveryCommand(t *testing.T) {
	t.Parallel()
	reg := New(Options{}).Registry()
	registered := reg.Types()
	for i, typ := range registered {
		require.EqualValues(t, i+1, typ, "types are dense and append-only")
		require.NotEmpty(t, reg.Name(typ))
	}
	require.Len(t, registered, 120, "a new command needs its handler, its script case and this count")
	_, used := makeScript(1, 2000) // long enough that the rarest maker comes up
	for _, typ := range registered {
		require.True(t, used[typ], "the determinism script never makes command %d (%s)", typ, reg.Name(typ))
	}
}

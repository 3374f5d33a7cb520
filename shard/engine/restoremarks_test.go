package engine

import (
	"fmt"
	"testing"
	"time"

	"github.com/cockroachdb/pebble"
	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/shard/keys"
)

// The in-memory set of restore markers follows every command that sets or
// clears one (begin, chunk, end, abort, the namespace delete), agrees with
// Pebble after each, and is rebuilt from Pebble by a new engine (a
// restart) and after a reset (what a snapshot restore does).
func TestRestoreMarksFollowTheCommands(t *testing.T) {
	f := setupFSM(t)
	agree := func(ns string, want bool) {
		t.Helper()
		require.Equal(t, want, f.e.Restoring(f.db, ns), "memory")
		require.Equal(t, want, f.marked(ns), "pebble")
	}
	agree(restoreNS, false) // loads the empty set
	f.apply(RestoreBegin.Type, &RestoreBeginCmd{NS: restoreNS, Token: "a"})
	agree(restoreNS, true)
	begun := f.e.RestoreMarks(f.db)[restoreNS]
	require.Equal(t, RestoreMark{Token: "a", At: f.now.UnixNano()}, begun)

	f.advance(time.Minute)
	require.Nil(t, f.apply(RestoreChunk.Type, &RestoreChunkCmd{NS: restoreNS, Token: "a", Recs: []RestoreRecord{{Key: []byte("qx"), Value: []byte{1}}}}))
	require.Equal(t, f.now.UnixNano(), f.e.RestoreMarks(f.db)[restoreNS].At, "a chunk moves the marker's time")
	require.IsType(t, &RestoreEnded{}, f.apply(RestoreEnd.Type, &RestoreTokenCmd{NS: restoreNS, Token: "a"}))
	agree(restoreNS, false)

	f.apply(RestoreBegin.Type, &RestoreBeginCmd{NS: restoreNS, Token: "b", Replace: true})
	agree(restoreNS, true)
	require.Nil(t, f.apply(RestoreAbort.Type, &RestoreTokenCmd{NS: restoreNS, Token: "b"}))
	agree(restoreNS, false)

	f.apply(RestoreBegin.Type, &RestoreBeginCmd{NS: restoreNS, Token: "c"})
	agree(restoreNS, true)
	f.purge(restoreNS, nil)
	agree(restoreNS, false)

	// A refused begin (a conflict) leaves the set as it was.
	f.populate(testNS, 1)
	require.Error(t, f.apply(RestoreBegin.Type, &RestoreBeginCmd{NS: testNS, Token: "d"}).(error))
	agree(testNS, false)

	// Restart: a new engine over the same state finds the marker.
	f.apply(RestoreBegin.Type, &RestoreBeginCmd{NS: restoreNS, Token: "e"})
	e2 := New(Options{})
	_, err := replica.NewLocal(f.db, e2.Registry())
	require.NoError(t, err)
	require.True(t, e2.Restoring(f.db, restoreNS))
	require.Equal(t, "e", e2.RestoreMarks(f.db)[restoreNS].Token)

	// Snapshot restore: the state changes under the engine (here a
	// write straight to Pebble stands for the ingested snapshot), then the
	// replica resets the engine, which reads the set again.
	require.NoError(t, f.db.Delete(keys.Restoring(restoreNS), pebble.Sync))
	require.NoError(t, f.db.Set(keys.Restoring(testNS), encodeRestoreMark(RestoreMark{Token: "s", At: 7}), pebble.Sync))
	require.True(t, f.e.Restoring(f.db, restoreNS), "stale until the reset")
	f.e.reset()
	require.False(t, f.e.Restoring(f.db, restoreNS))
	require.True(t, f.e.Restoring(f.db, testNS))
	require.Equal(t, RestoreMark{Token: "s", At: 7}, f.e.RestoreMarks(f.db)[testNS])
}

// A marker written before markers held their time reads as its token, at 0.
func TestRestoreMarkOfTokenOnly(t *testing.T) {
	require.Equal(t, RestoreMark{Token: "0123abcd"}, decodeRestoreMark([]byte("0123abcd")))
	m := RestoreMark{Token: "0123abcd", At: 1_800_000_000_000_000_000}
	require.Equal(t, m, decodeRestoreMark(encodeRestoreMark(m)))
}

// The leader's abort of an idle restore is refused while the marker's
// last write is more recent than Idle, by the entry's clock.
func TestApplyIdleRestoreAbort(t *testing.T) {
	f := setupFSM(t)
	f.apply(RestoreBegin.Type, &RestoreBeginCmd{NS: restoreNS, Token: "a"})
	f.advance(9 * time.Minute)
	require.Nil(t, f.apply(RestoreChunk.Type, &RestoreChunkCmd{NS: restoreNS, Token: "a", Recs: []RestoreRecord{{Key: []byte("qx"), Value: []byte{1}}}}))
	f.advance(9 * time.Minute)
	idle := int64(10 * time.Minute)
	require.ErrorIs(t, f.apply(RestoreAbort.Type, &RestoreTokenCmd{NS: restoreNS, Token: "a", Idle: idle}).(error), ErrRestoreNotIdle)
	require.True(t, f.e.Restoring(f.db, restoreNS))
	require.NotEmpty(t, f.records(restoreNS))
	f.advance(time.Minute)
	require.Nil(t, f.apply(RestoreAbort.Type, &RestoreTokenCmd{NS: restoreNS, Token: "a", Idle: idle}))
	require.False(t, f.e.Restoring(f.db, restoreNS))
	require.Empty(t, f.records(restoreNS))
}

// BenchmarkRestoringCheck is the check the API makes on every /api/v1
// request, of a namespace not restoring, over a state of 100,000 jobs'
// keys: pebble reads the marker's key from the state (as before the
// in-memory set), memory asks the set.
func BenchmarkRestoringCheck(b *testing.B) {
	db, err := pebble.Open(b.TempDir(), replica.StateOptions())
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	e := New(Options{})
	if _, err := replica.NewLocal(db, e.Registry()); err != nil {
		b.Fatal(err)
	}
	bt := db.NewBatch()
	for i := range 100_000 {
		_ = bt.Set(append(keys.Namespace(testNS), fmt.Sprintf("j%026d", i)...), make([]byte, 200), nil)
	}
	_ = bt.Set(keys.Restoring(restoreNS), encodeRestoreMark(RestoreMark{Token: "x"}), nil)
	if err := bt.Commit(pebble.NoSync); err != nil {
		b.Fatal(err)
	}
	if err := db.Flush(); err != nil {
		b.Fatal(err)
	}
	b.Run("pebble", func(b *testing.B) {
		for b.Loop() {
			if _, ok := RestoreMarker(db, testNS); ok {
				b.Fatal("marked")
			}
		}
	})
	b.Run("memory", func(b *testing.B) {
		for b.Loop() {
			if e.Restoring(db, testNS) {
				b.Fatal("marked")
			}
		}
	})
}

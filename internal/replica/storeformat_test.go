package replica

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cockroachdb/pebble"
	"github.com/hashicorp/go-hclog"
	"github.com/stretchr/testify/require"
)

// A store written before its state machine removed keys with SingleDelete
// may hold two sets of one key in different levels; opened under the
// format that assumes one (Registry.StoreFormat), it is compacted first,
// so a SingleDelete removes the key for good instead of bringing the
// older set back.
func TestOpenCompactsAStoreOfAnOlderFormat(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	open(t, dir, &counter{}).Close() // a group with its Raft state, written under format 0
	key := []byte("p/job")
	db, err := pebble.Open(filepath.Join(dir, "state"), StateOptions())
	require.NoError(t, err)
	require.NoError(t, db.Set(key, []byte("first"), pebble.NoSync))
	require.NoError(t, db.Flush())
	require.NoError(t, compactAll(db)) // the first set in the bottom level
	require.NoError(t, db.Set(key, []byte("second"), pebble.NoSync))
	require.NoError(t, db.Flush()) // the second in L0
	require.NoError(t, db.Close())

	reg := (&counter{}).registry()
	reg.StoreFormat(1)
	n, err := Open(Config{Dir: dir, HeartbeatTimeout: 100 * time.Millisecond, ElectionTimeout: 100 * time.Millisecond,
		Logger: hclog.NewNullLogger()}, reg)
	require.NoError(t, err)
	defer n.Close()
	v, closer, err := n.DB().Get(key)
	require.NoError(t, err, "the store is the one written before")
	require.Equal(t, "second", string(v))
	require.NoError(t, closer.Close())
	st := n.DB()
	require.NoError(t, st.SingleDelete(key, pebble.NoSync))
	require.NoError(t, st.Flush())
	require.NoError(t, st.Compact([]byte{}, []byte{0xff, 0xff, 0xff, 0xff}, false)) // no live key left for compactAll to find
	_, _, err = st.Get(key)
	require.True(t, errors.Is(err, pebble.ErrNotFound), "the key is gone, not its first set back: %v", err)
	b, err := os.ReadFile(filepath.Join(dir, storeFormatFile))
	require.NoError(t, err)
	require.Equal(t, "1\n", string(b))
}

// A store opened under its recorded format, or a lower one, is not
// compacted again (a closed store would panic if it were), and a format
// file that is not a number is an error, not format 0.
func TestStoreFormatIsUpgradedOnce(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db, err := pebble.Open(filepath.Join(dir, "state"), StateOptions())
	require.NoError(t, err)
	require.NoError(t, upgradeStore(db, dir, 2)) // an empty store: nothing to compact, the format recorded
	require.NoError(t, db.Close())
	require.NoError(t, upgradeStore(db, dir, 2))
	require.NoError(t, upgradeStore(db, dir, 1))
	require.NoError(t, upgradeStore(db, dir, 0))
	require.NoError(t, os.WriteFile(filepath.Join(dir, storeFormatFile), []byte("two\n"), 0o644))
	require.ErrorContains(t, upgradeStore(db, dir, 2), storeFormatFile)
}

// Two sets of one key can both reach the bottom level, kept apart there
// by a snapshot open when they met (the shard's backups, searches and
// moves read from snapshots). Compacting the levels above it into the
// bottom one leaves such a key alone, so the upgrade must rewrite the
// bottom level too.
func TestStoreUpgradeMergesTwoSetsInTheBottomLevel(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	key := []byte("p/job")
	db, err := pebble.Open(filepath.Join(dir, "state"), StateOptions())
	require.NoError(t, err)
	require.NoError(t, db.Set([]byte("a"), []byte("x"), pebble.NoSync))
	require.NoError(t, db.Set(key, []byte("first"), pebble.NoSync))
	require.NoError(t, db.Set([]byte("z"), []byte("x"), pebble.NoSync))
	require.NoError(t, db.Flush())
	require.NoError(t, compactAll(db)) // the first set in the bottom level
	snap := db.NewSnapshot()
	require.NoError(t, db.Set(key, []byte("second"), pebble.NoSync))
	require.NoError(t, db.Flush())
	require.NoError(t, compactAll(db)) // the second beside it: the snapshot keeps both
	require.NoError(t, snap.Close())

	require.NoError(t, upgradeStore(db, dir, 1))
	require.NoError(t, db.SingleDelete(key, pebble.NoSync))
	require.NoError(t, db.Flush())
	require.NoError(t, db.Compact([]byte{}, []byte{0xff, 0xff, 0xff, 0xff}, false))
	v, closer, err := db.Get(key)
	if err == nil {
		got := string(v)
		closer.Close()
		t.Fatalf("the key's first set is back after its single delete: %q", got)
	}
	require.True(t, errors.Is(err, pebble.ErrNotFound), err)
	require.NoError(t, db.Close())
}

package replica

import (
	"testing"

	"github.com/hashicorp/raft"
	wal "github.com/hashicorp/raft-wal"
	"github.com/hashicorp/raft-wal/metadb"
	"github.com/stretchr/testify/require"
)

// A node whose uncommitted log tail a new leader overwrote (Raft deletes
// the conflicting suffix) must still open its log after a kill. raft-wal
// v0.4.0 sealed the tail segment without its index block there, and the
// next start panicked in raft.NewRaft ("sealed segment has no index block").
func TestLogOpensAfterTailTruncation(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	openLog := func() (*wal.WAL, *metadb.BoltMetaDB) {
		meta := &metadb.BoltMetaDB{}
		w, err := wal.Open(dir, wal.WithMetaStore(meta))
		require.NoError(t, err)
		return w, meta
	}
	logs := func(from, to, term uint64) []*raft.Log {
		var out []*raft.Log
		for i := from; i <= to; i++ {
			out = append(out, &raft.Log{Index: i, Term: term, Type: raft.LogCommand, Data: []byte("entry")})
		}
		return out
	}
	w, meta := openLog()
	require.NoError(t, w.StoreLogs(logs(1, 20, 1)))
	require.NoError(t, w.DeleteRange(16, 20)) // the conflicting suffix
	require.NoError(t, w.StoreLogs(logs(16, 25, 2)))
	// No clean close: the process is killed here. (Its files and
	// goroutine are released when the test ends.)
	require.NoError(t, meta.Close())
	killed := w
	t.Cleanup(func() { _ = killed.Close() })

	w, meta = openLog()
	defer meta.Close()
	defer w.Close()
	var l raft.Log
	require.NoError(t, w.GetLog(1, &l))
	require.NoError(t, w.GetLog(15, &l))
	require.EqualValues(t, 1, l.Term)
	require.NoError(t, w.GetLog(25, &l))
	require.EqualValues(t, 2, l.Term)
	last, err := w.LastIndex()
	require.NoError(t, err)
	require.EqualValues(t, 25, last)
}

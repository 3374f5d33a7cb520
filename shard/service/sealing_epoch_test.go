package service

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/cockroachdb/pebble"
	"github.com/hashicorp/go-hclog"
	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/shard/engine"
	"github.com/jobbie/jobbie/shard/live"
)

// A record read while a change is committing (the engine's epoch is 0
// then) is not kept: kept under 0, it was what the next change's readers
// were given while that one committed, though it had changed.
func TestKeysReadWhileAChangeCommitsAreNotKept(t *testing.T) {
	clk := clockwork.NewRealClock()
	eng := engine.New(engine.Options{})
	node, err := replica.Open(replica.Config{Dir: t.TempDir(), Bootstrap: true, Clock: clk,
		HeartbeatTimeout: 100 * time.Millisecond, ElectionTimeout: 100 * time.Millisecond, Logger: hclog.NewNullLogger()}, eng.Registry())
	require.NoError(t, err)
	t.Cleanup(func() { _ = node.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.NoError(t, node.WaitLeader(ctx))
	s := New(Config{Clock: clk, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}, eng, node, live.NewWaiters(clk))
	t.Cleanup(s.Close)
	const ns = "t_01hx0000000000000000000000/default"

	// change commits a change of ns's record to version prev+1 as the
	// replica does, and returns what runs after the commit.
	change := func(prev int64, on bool) func() {
		b := node.DB().NewIndexedBatch()
		defer b.Close()
		tx := replica.NewTx(b, time.Now(), 1<<40)
		cmd := replica.Command(engine.NamespaceEncryption.Type, replica.Encode(&engine.EncryptionCmd{NS: ns, Prev: prev, Record: engine.EncryptionRecord{Enabled: on}}))
		_, err := eng.Registry().Apply(tx, cmd)
		require.NoError(t, err)
		tx.RunBeforeCommit()
		require.NoError(t, b.Commit(pebble.NoSync))
		return tx.RunAfterCommit
	}
	counted := change(0, true) // ns's first read is while it commits

	require.Equal(t, int64(1), s.keysOf(ns).rec.Version, "committed: read as it stands")
	counted()
	counted = change(1, false)
	require.Equal(t, int64(2), s.keysOf(ns).rec.Version, "the next change committed: read as it stands")
	counted()
	require.Equal(t, int64(2), s.keysOf(ns).rec.Version)
}

package leader

import (
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/shard/engine"
)

// A restore left behind (nothing on the leader writes it) is aborted by
// the leader's sweep once its last begin or chunk is RestoreIdle old, by
// the leader's clock: a restore that wrote a chunk more recently stays,
// until it too goes idle. Real Raft and Pebble; a fake clock stamps the
// entries and drives the sweep.
func TestSweepAbortsAnIdleRestore(t *testing.T) {
	t.Parallel()
	eng, node, svc, clk, ctx := leaderNode(t)
	loops := Start(Config{SweepInterval: 100 * time.Millisecond, Clock: clk, Logger: quiet}, eng, node, svc)
	defer loops.Stop()

	const lost, slow = "t_01hx0000000000000000000002/lost", "t_01hx0000000000000000000002/slow"
	chunk := func(ns, token string) {
		t.Helper()
		_, err := engine.RestoreChunk.Propose(ctx, node, &engine.RestoreChunkCmd{NS: ns, Token: token,
			Recs: []engine.RestoreRecord{{Key: []byte("qx"), Value: []byte{0x80}}}})
		require.NoError(t, err)
	}
	for _, ns := range []string{lost, slow} {
		_, err := engine.RestoreBegin.Propose(ctx, node, &engine.RestoreBeginCmd{NS: ns, Token: "tok-" + ns})
		require.NoError(t, err)
		chunk(ns, "tok-"+ns)
	}
	clk.Advance(9 * time.Minute)
	chunk(slow, "tok-"+slow)
	// Tick until the lost restore is gone; the slow one wrote 9 minutes
	// after it, so it stays.
	tickUntil(t, clk, 2*time.Minute, func() bool { return !eng.Restoring(node.DB(), lost) })
	require.True(t, engine.RestoreRefusing(node.DB()), "the sweep that aborted it started the restore gate first")
	require.True(t, eng.Restoring(node.DB(), slow))
	require.True(t, engine.HasData(node.DB(), slow))
	require.False(t, engine.HasData(node.DB(), lost), "the abort deletes what the restore wrote")

	tickUntil(t, clk, 10*time.Minute, func() bool { return !eng.Restoring(node.DB(), slow) })
	require.False(t, engine.HasData(node.DB(), slow))
}

// tickUntil moves the clock one sweep interval at a time (the first step
// by first), letting each tick's sweep commit, until done, within a
// generous bound of real time.
func tickUntil(t *testing.T, clk *clockwork.FakeClock, first time.Duration, done func() bool) {
	t.Helper()
	clk.Advance(first)
	deadline := time.Now().Add(30 * time.Second)
	for !done() {
		require.True(t, time.Now().Before(deadline), "the sweep did not abort the idle restore")
		time.Sleep(20 * time.Millisecond)
		clk.Advance(100 * time.Millisecond)
	}
}

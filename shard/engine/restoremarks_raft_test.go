package engine

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/replica"
)

// A follower that catches up from a Raft snapshot (its log gone on the
// leader) finds the restore marker the snapshot holds: the state changed
// under its engine, whose set of markers it had already loaded (empty),
// and the replica's reset after the restore makes it read them again.
// Real Raft and Pebble, two nodes on 127.0.0.1.
func TestRestoreMarksAfterASnapshotRestore(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	open := func(id string, bootstrap bool) (*replica.Node, *Engine) {
		e := New(Options{})
		n, err := replica.Open(replica.Config{Dir: filepath.Join(base, id), NodeID: id, Bootstrap: bootstrap,
			HeartbeatTimeout: 200 * time.Millisecond, ElectionTimeout: 200 * time.Millisecond, TrailingLogs: 4,
			SnapshotThreshold: 1 << 30, Logger: hclog.NewNullLogger()}, e.Registry())
		require.NoError(t, err)
		t.Cleanup(func() { _ = n.Close() })
		return n, e
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	a, ea := open("a", true)
	require.NoError(t, a.WaitLeader(ctx))
	_, err := RestoreBegin.Propose(ctx, a, &RestoreBeginCmd{NS: restoreNS, Token: "tok"})
	require.NoError(t, err)
	for range 20 { // push the begin out of the log the leader keeps
		_, err := UsageSweep.Propose(ctx, a, &UsageSweepCmd{})
		require.NoError(t, err)
	}
	require.NoError(t, a.Snapshot())
	require.True(t, ea.Restoring(a.DB(), restoreNS))

	b, eb := open("b", false)
	require.False(t, eb.Restoring(b.DB(), restoreNS), "nothing yet: the empty set is loaded")
	require.NoError(t, a.AddVoter(ctx, "b", b.RaftAddr()))
	require.Eventually(t, func() bool { return b.Restores() >= 1 && b.AppliedIndex() >= a.AppliedIndex() }, 20*time.Second, 10*time.Millisecond)
	require.True(t, eb.Restoring(b.DB(), restoreNS), "the marker the snapshot brought")
	require.Equal(t, "tok", eb.RestoreMarks(b.DB())[restoreNS].Token)

	// And the log after the snapshot keeps it, applied as entries.
	// Proposed to whichever of the two leads, and again after a lead lost
	// while it replicated (200 ms timeouts on a loaded machine): an abort
	// may be sent again, the restore then being gone.
	sentBefore := false
	require.Eventually(t, func() bool {
		for _, n := range []*replica.Node{a, b} {
			_, err := RestoreAbort.Propose(ctx, n, &RestoreTokenCmd{NS: restoreNS, Token: "tok"})
			var ae *apierr.Error
			errors.As(err, &ae)
			switch {
			case ae != nil && ae.Code == apierr.NoLeader: // not the leader, or none yet
				continue
			case ae != nil && ae.Code == apierr.Unavailable: // may or may not have been applied
				sentBefore = true
				return false
			case sentBefore && ae == ErrRestoreGone: // not errors.Is: it matches any conflict
				return true
			}
			require.NoError(t, err)
			return true
		}
		return false
	}, 20*time.Second, 10*time.Millisecond, "the abort is applied")
	require.Eventually(t, func() bool { return !eb.Restoring(b.DB(), restoreNS) }, 20*time.Second, 10*time.Millisecond)
}

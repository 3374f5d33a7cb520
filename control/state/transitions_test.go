package state

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/wire"
)

// Every step the move table allows, and nothing else.
func TestMoveTable(t *testing.T) {
	t.Parallel()
	// Every allowed step, as from --step--> to; everything else is refused.
	allowed := map[[2]string]string{}
	for _, tr := range []struct {
		from string
		step MoveStep
		to   string
	}{
		{"", MoveStart, wire.MoveCopying},
		{wire.MoveCopying, MoveCopied, wire.MoveCatchingUp},
		{wire.MoveCatchingUp, MoveCopied, wire.MoveCatchingUp},
		{wire.MoveCatchingUp, MoveFence, wire.MoveFenced},
		{wire.MoveFenced, MoveCommit, wire.MoveFenced},
		{wire.MoveFenced, MoveSwitch, wire.MoveSwitched},
		{wire.MoveSwitched, MoveComplete, wire.MoveCompleted},
		{wire.MoveCopying, MoveFail, wire.MoveFailed},
		{wire.MoveCatchingUp, MoveFail, wire.MoveFailed},
		{wire.MoveFenced, MoveFail, wire.MoveFailed},
		{wire.MoveCopying, MoveCancel, wire.MoveCancelled},
		{wire.MoveCatchingUp, MoveCancel, wire.MoveCancelled},
		{wire.MoveFenced, MoveCancel, wire.MoveCancelled},
	} {
		allowed[[2]string{tr.from, string(tr.step)}] = tr.to
	}
	steps := []MoveStep{MoveStart, MoveCopied, MoveFence, MoveCommit, MoveSwitch, MoveComplete, MoveFail, MoveCancel}
	for _, step := range steps {
		for _, from := range append([]string{""}, MoveStates...) {
			to, ok := MoveNext(from, step)
			want, allow := allowed[[2]string{from, string(step)}]
			require.Equal(t, allow, ok, "%s from %q", step, from)
			require.Equal(t, want, to, "%s from %q", step, from)
		}
	}
	require.Len(t, moveSteps, len(steps), "every step is tested")
	for _, s := range MoveStates {
		ended := s == wire.MoveCompleted || s == wire.MoveFailed || s == wire.MoveCancelled
		require.Equal(t, ended, MoveEnded(s), s)
	}
	require.False(t, MoveEnded("bogus"))
}

// move_progress carries a target state: only the targets the runner
// sends read as steps.
func TestProgressSteps(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		c    MoveProgressCmd
		step MoveStep
		ok   bool
	}{
		{MoveProgressCmd{State: wire.MoveCatchingUp}, MoveCopied, true},
		{MoveProgressCmd{State: wire.MoveFenced, Fenced: true}, MoveFence, true},
		{MoveProgressCmd{State: wire.MoveFenced, Committing: true}, MoveCommit, true},
		{MoveProgressCmd{State: wire.MoveCopying}, "", false},
		{MoveProgressCmd{State: wire.MoveFenced}, "", false},
		{MoveProgressCmd{State: wire.MoveSwitched}, "", false},
		{MoveProgressCmd{State: wire.MoveCompleted}, "", false},
		{MoveProgressCmd{State: wire.MoveCatchingUp, Fenced: true}, "", false},
		{MoveProgressCmd{State: wire.MoveFenced, Fenced: true, Committing: true}, "", false},
	} {
		step, ok := progressStep(&tc.c)
		require.Equal(t, tc.ok, ok, "%+v", tc.c)
		require.Equal(t, tc.step, step, "%+v", tc.c)
	}
	m := MoveRecord{Move: wire.Move{ID: "mov_1", State: wire.MoveCatchingUp, Rounds: 2, Records: 3, Bytes: 4}}
	c, ok := ProgressCmd(m, MoveFence)
	require.True(t, ok)
	require.Equal(t, MoveProgressCmd{ID: "mov_1", State: wire.MoveFenced, Rounds: 2, Records: 3, Bytes: 4, Fenced: true}, c)
	_, ok = ProgressCmd(m, MoveCommit)
	require.False(t, ok, "no commit before the fence")
	_, ok = ProgressCmd(m, MoveSwitch)
	require.False(t, ok, "a switch is its own command")
}

// The apply refuses, writing nothing, every progress the table does not
// list from where the move stands.
func TestApplyMoveProgressFollowsTheTable(t *testing.T) {
	t.Parallel()
	b := setupApply(t)
	apply(t, b, applyCreateTenant, CreateTenantCmd{ID: tidA, Name: "acme", OwnerKeyID: kidA, Placement: Placement{Shards: []string{"s1", "s2"}}})
	out, _ := apply(t, b, applyStartMove, StartMoveCmd{ID: "mov_1", Tenant: tidA, Namespace: "default", ToShard: "s2", StaticShards: []string{"s1", "s2"}})
	require.Equal(t, wire.MoveCopying, out.(MoveRecord).State)

	refuse := func(c MoveProgressCmd) {
		t.Helper()
		c.ID = "mov_1"
		out, empty := apply(t, b, applyMoveProgress, c)
		requireCode(t, out, apierr.Conflict, empty)
	}
	refuse(MoveProgressCmd{State: wire.MoveFenced, Fenced: true})     // no fence before a copy
	refuse(MoveProgressCmd{State: wire.MoveFenced, Committing: true}) // no commit before the fence
	refuse(MoveProgressCmd{State: wire.MoveSwitched})                 // a switch is switch_move
	refuse(MoveProgressCmd{State: wire.MoveCopying})
	out, _ = apply(t, b, applyMoveProgress, MoveProgressCmd{ID: "mov_1", State: wire.MoveCatchingUp, Rounds: 1})
	require.Equal(t, wire.MoveCatchingUp, out.(MoveRecord).State)
	out, empty := apply(t, b, applySwitchMove, SwitchMoveCmd{ID: "mov_1"})
	requireCode(t, out, apierr.Conflict, empty)
	out, _ = apply(t, b, applyMoveProgress, MoveProgressCmd{ID: "mov_1", State: wire.MoveFenced, Fenced: true})
	require.Equal(t, wire.MoveFenced, out.(MoveRecord).State)
	require.NotNil(t, out.(MoveRecord).FencedAt)
	refuse(MoveProgressCmd{State: wire.MoveCatchingUp}) // no copy round once fenced
	out, _ = apply(t, b, applyMoveProgress, MoveProgressCmd{ID: "mov_1", State: wire.MoveFenced, Committing: true})
	require.True(t, out.(MoveRecord).Committing)
	out, empty = apply(t, b, applyEndMove, EndMoveCmd{ID: "mov_1"})
	requireCode(t, out, apierr.Conflict, empty) // only a switched move completes
	out, _ = apply(t, b, applySwitchMove, SwitchMoveCmd{ID: "mov_1"})
	require.Equal(t, wire.MoveSwitched, out.(MoveRecord).State)
	out, empty = apply(t, b, applyEndMove, EndMoveCmd{ID: "mov_1", Failed: true})
	requireCode(t, out, apierr.Conflict, empty) // a switched move only completes
	out, _ = apply(t, b, applyEndMove, EndMoveCmd{ID: "mov_1"})
	require.Equal(t, wire.MoveCompleted, out.(MoveRecord).State)
}

func TestRunTable(t *testing.T) {
	t.Parallel()
	states := []string{"", wire.BackupRunning, wire.BackupCompleted, wire.BackupFailed}
	allowed := map[[2]string]string{
		{"", string(RunStart)}:                   wire.BackupRunning,
		{wire.BackupRunning, string(RunSucceed)}: wire.BackupCompleted,
		{wire.BackupRunning, string(RunFail)}:    wire.BackupFailed,
	}
	for _, step := range []RunStep{RunStart, RunSucceed, RunFail} {
		for _, from := range states {
			to, ok := RunNext(from, step)
			want, allow := allowed[[2]string{from, string(step)}]
			require.Equal(t, allow, ok, "%s from %q", step, from)
			require.Equal(t, want, to, "%s from %q", step, from)
		}
	}
	require.Len(t, runSteps, 3)
	require.Equal(t, wire.BackupCompleted, RunEnd(nil))
	require.Equal(t, wire.BackupFailed, RunEnd(errors.New("x")))
}

// finish_backup and finish_restore carry the state a run ends in: only
// an end of a run is taken, and only from running.
func TestApplyFinishFollowsTheTable(t *testing.T) {
	t.Parallel()
	b := setupApply(t)
	apply(t, b, applyCreateTenant, CreateTenantCmd{ID: tidA, Name: "acme", OwnerKeyID: kidA, Placement: Placement{Shards: []string{"s1"}}})
	apply(t, b, applyStartBackup, StartBackupCmd{Tenant: tidA, ID: "bkp_1", Namespace: "default", Kind: wire.BackupManual})
	for _, bad := range []string{wire.BackupRunning, "", "done"} {
		out, empty := apply(t, b, applyFinishBackup, FinishBackupCmd{Tenant: tidA, ID: "bkp_1", State: bad})
		requireCode(t, out, apierr.Conflict, empty)
	}
	out, _ := apply(t, b, applyFinishBackup, FinishBackupCmd{Tenant: tidA, ID: "bkp_1", State: wire.BackupCompleted})
	require.Equal(t, wire.BackupCompleted, out.(BackupRecord).State)
	out, empty := apply(t, b, applyFinishBackup, FinishBackupCmd{Tenant: tidA, ID: "bkp_1", State: wire.BackupFailed})
	require.Equal(t, wire.BackupCompleted, out.(BackupRecord).State, "a run that ended is left as it is")
	require.True(t, empty)

	out, _ = apply(t, b, applyStartRestore, StartRestoreCmd{Tenant: tidA, BackupID: "bkp_1",
		Restore: wire.BackupRestore{ID: "rst_1", Mode: wire.RestoreNew, TargetNamespace: "copy"}})
	require.Equal(t, wire.BackupRunning, out.(RestoreStarted).Backup.LastRestore.State)
	out, empty = apply(t, b, applyFinishRestore, FinishRestoreCmd{Tenant: tidA, BackupID: "bkp_1", RestoreID: "rst_1", State: wire.BackupRunning})
	requireCode(t, out, apierr.Conflict, empty)
	out, _ = apply(t, b, applyFinishRestore, FinishRestoreCmd{Tenant: tidA, BackupID: "bkp_1", RestoreID: "rst_1", State: wire.BackupFailed, Error: "x"})
	require.Equal(t, wire.BackupFailed, out.(BackupRecord).LastRestore.State)
}

package service

import (
	"context"
	"time"

	"github.com/cockroachdb/pebble"
	"github.com/jobbie/jobbie/control/state"
	"github.com/jobbie/jobbie/internal/apierr"
)

// PutUsage stores the entries the ledger does not already hold as they
// are, and moves the cursor when next is set: a round in which nothing
// changed proposes nothing.
func (s *Service) PutUsage(ctx context.Context, shard string, entries []state.UsageEntry, next, applied time.Time) error {
	changed, err := ViewValue(s, func(r pebble.Reader) ([]state.UsageEntry, error) {
		var out []state.UsageEntry
		for _, e := range entries {
			have, ok, err := state.LoadShardMeters(r, e.Tenant, e.Namespace, state.UnixHour(e.Hour), shard)
			if err != nil {
				return nil, err
			}
			if !ok || have != e.Meters {
				out = append(out, e)
			}
		}
		return out, nil
	})
	if err != nil {
		return err
	}
	if len(changed) == 0 && next.IsZero() {
		return nil
	}
	cmd := state.PutUsageCmd{Shard: shard, Entries: changed}
	if !next.IsZero() {
		cmd.Cursor, cmd.AppliedAt = next.Unix(), applied.UnixNano()
	}
	_, err = propose(ctx, s, state.OpPutUsage, &cmd)
	return err
}

// The leader's runners record what they did through these: the service
// builds every command.

// FinishBackup records how a backup ended.
func (s *Service) FinishBackup(ctx context.Context, c *state.FinishBackupCmd) error {
	_, err := propose(ctx, s, state.OpFinishBackup, c)
	return err
}

// FinishRestore records how a restore ended.
func (s *Service) FinishRestore(ctx context.Context, c *state.FinishRestoreCmd) error {
	_, err := propose(ctx, s, state.OpFinishRestore, c)
	return err
}

// ForgetBackup deletes the record of a backup whose stream is gone.
func (s *Service) ForgetBackup(ctx context.Context, tid, id string) error {
	_, err := propose(ctx, s, state.OpDeleteBackup, &state.DeleteBackupCmd{Tenant: tid, ID: id})
	return err
}

// RecordMove records step of running move m with m's counters; the
// lifecycle table (state.MoveNext) says which state the step leads to.
func (s *Service) RecordMove(ctx context.Context, m state.MoveRecord, step state.MoveStep) (state.MoveRecord, error) {
	c, ok := state.ProgressCmd(m, step)
	if !ok {
		return m, apierr.New(apierr.Conflict, "move %s is %s: it cannot %s", m.ID, m.State, step)
	}
	return propose(ctx, s, state.OpMoveProgress, &c)
}

// SwitchMove places a fenced move's namespace on its target.
func (s *Service) SwitchMove(ctx context.Context, c *state.SwitchMoveCmd) (state.MoveRecord, error) {
	return propose(ctx, s, state.OpSwitchMove, c)
}

// EndMove ends a move: completed once switched, else failed (cancelled
// when a cancel was asked).
func (s *Service) EndMove(ctx context.Context, c *state.EndMoveCmd) (state.MoveRecord, error) {
	return propose(ctx, s, state.OpEndMove, c)
}

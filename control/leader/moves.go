package leader

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jobbie/jobbie/control/state"
	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/wire"
)

// Running live namespace moves, on the leader (docs/internal-api.md,
// "Live namespace moves"): begin on the target; the source's snapshot
// streamed into the target's apply; rounds of deltas while the last copy
// held more than deltaRecords records (at most maxDeltas); the source's
// fence; the final delta; end on the target; the switch (placement and
// state in one control entry); finish on the source, retried until it
// succeeds; completed. A failure or a cancel before the switch lifts the
// fence and aborts the target, and the move ends failed (or cancelled):
// the namespace stays where it was. Every shard call carries the move id
// as its token. The loop fails the moves an earlier leader left before
// their switch, the same way, and finishes those it left switched.

const (
	movePath = "/internal/v1/move/"
	// moveDeltaRecords: a copy of more records than this is followed by
	// another delta round before the fence.
	moveDeltaRecords = 1000
	// moveMaxDeltas bounds the delta rounds before the fence.
	moveMaxDeltas = 5
	// moveFenceTTL is the fence asked of the source: it lapses by itself
	// if control stops before lifting it.
	moveFenceTTL = 30 * time.Second
	// moveFenceMargin is the part of the fence's ttl the switch must
	// leave: past ttl-margin, the move fails rather than switch when the
	// source may be taking writes again.
	moveFenceMargin = 5 * time.Second
	// moveCleanupTimeout bounds lifting the fence and aborting the target.
	moveCleanupTimeout = 30 * time.Second
	// moveCallTimeout bounds one call of a step other than a copy.
	moveCallTimeout = 30 * time.Second
)

// Errors of moves control ended.
const (
	MoveLeaderChanged = "interrupted by a control leader change"
	MoveStopped       = "interrupted: the control node stopped while it ran"
)

// errMoveCancelled is the cause of a move's context cancelled by the
// operator.
var errMoveCancelled = errors.New("cancelled by the operator")

// run drives move m from where its record stands.
func (r *moveRunner) run(ctx context.Context, m state.MoveRecord) {
	if m.State != wire.MoveSwitched {
		cctx, cancel := context.WithTimeout(ctx, maxRunTime)
		err := r.copy(cctx, &m)
		cancel()
		if err != nil {
			if errors.Is(err, errSwitchUnknown) {
				// The switch may have been applied: the record says, and
				// the loop acts on it once this node no longer runs it.
				r.s.log.Warn("control: move switch outcome unknown", "move", m.ID, "err", err)
				return
			}
			if context.Cause(ctx) == errLostLead {
				// The next leader fails it as interrupted and cleans up
				// (adoptOrphans): one cleanup, one account of it.
				r.s.log.Warn("control: move interrupted: this node no longer leads", "move", m.ID, "err", err)
				return
			}
			r.fail(ctx, m, err)
			return
		}
	}
	r.finish(ctx, m)
}

// errSwitchUnknown is a switch proposal whose outcome is unknown.
var errSwitchUnknown = errors.New("the switch's outcome is unknown")

// copy runs m up to and including its switch; m follows the record.
func (r *moveRunner) copy(ctx context.Context, m *state.MoveRecord) error {
	if err := r.call(ctx, *m, m.ToShard, "begin", nil, nil); err != nil {
		return fmt.Errorf("begin on target shard %s: %w", m.ToShard, err)
	}
	last, err := r.transfer(ctx, m, "snapshot")
	if err != nil {
		return err
	}
	if err := r.progress(ctx, m, state.MoveCopied); err != nil {
		return err
	}
	for deltas := 0; last > r.deltaRecords && deltas < r.maxDeltas; deltas++ {
		if last, err = r.transfer(ctx, m, "delta"); err != nil {
			return err
		}
		m.Rounds++
		if err := r.progress(ctx, m, state.MoveCopied); err != nil {
			return err
		}
	}
	fencedAt := time.Now()
	ttl := r.fenceTTL.Milliseconds()
	if err := r.call(ctx, *m, m.FromShard, "fence", map[string]int64{"ttl_ms": ttl}, nil); err != nil {
		return fmt.Errorf("fence on source shard %s: %w", m.FromShard, err)
	}
	// The rest must end before the fence could lapse.
	deadline := fencedAt.Add(r.fenceTTL - r.fenceMargin)
	fctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	if err := r.progress(fctx, m, state.MoveFence); err != nil {
		return err
	}
	if _, err := r.transfer(fctx, m, "delta"); err != nil {
		return fenceErr(fctx, err)
	}
	m.Rounds++
	// From here a cancel is refused: the move goes on to end the target
	// and switch. A failure still aborts, which removes the target's copy
	// while no client's command has reached it (a 409 once one did).
	if err := r.commit(fctx, m); err != nil {
		return fenceErr(fctx, err)
	}
	if err := r.call(fctx, *m, m.ToShard, "end", nil, nil); err != nil {
		return fenceErr(fctx, fmt.Errorf("end on target shard %s: %w", m.ToShard, err))
	}
	// A call may succeed past the deadline: its answer and the deadline's
	// timer can be ready at once on a starved machine, and either wins.
	if late := time.Since(deadline); late >= 0 {
		return fmt.Errorf("the cut-over did not end within the fence's time: the target ended %s past it", late.Round(time.Millisecond))
	}
	// The fence outlasts fctx by fenceMargin: time enough for one entry.
	sctx, scancel := context.WithTimeout(context.WithoutCancel(ctx), r.fenceMargin)
	defer scancel()
	sw, err := r.s.SwitchMove(sctx, &state.SwitchMoveCmd{ID: m.ID, Rounds: m.Rounds, Records: m.Records, Bytes: m.Bytes})
	if err != nil {
		if refused(err) {
			return fmt.Errorf("switch: %w", err)
		}
		return fmt.Errorf("%w: %v", errSwitchUnknown, err)
	}
	*m = sw
	r.s.log.Info("control: namespace moved", "tenant", m.TenantID, "namespace", m.Namespace, "from", m.FromShard, "to", m.ToShard,
		"move", m.ID, "pause_ms", m.PauseMS, "records", m.Records, "rounds", m.Rounds)
	return nil
}

// commit records that m's target is about to end: cancels are refused
// from this entry on.
func (r *moveRunner) commit(ctx context.Context, m *state.MoveRecord) error {
	return r.progress(ctx, m, state.MoveCommit)
}

// fenceErr says so when err is the fence's deadline passing.
func fenceErr(fctx context.Context, err error) error {
	if errors.Is(fctx.Err(), context.DeadlineExceeded) && context.Cause(fctx) == context.DeadlineExceeded {
		return fmt.Errorf("the cut-over did not end within the fence's time: %w", err)
	}
	return err
}

// refused reports whether a proposal was refused by its handler (it
// changed nothing), not lost to replication.
func refused(err error) bool {
	c := apierr.CodeOf(err)
	return c == apierr.Conflict || c == apierr.NotFound || c == apierr.BadRequest
}

// progress records m's step; a refusal (a cancel asked) or a failure
// fails the move.
func (r *moveRunner) progress(ctx context.Context, m *state.MoveRecord, step state.MoveStep) error {
	got, err := r.s.RecordMove(ctx, *m, step)
	if err != nil {
		return fmt.Errorf("record progress: %w", err)
	}
	*m = got
	return nil
}

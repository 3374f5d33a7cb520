package leader

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/cockroachdb/pebble"
	"github.com/jobbie/jobbie/control/state"
	"github.com/jobbie/jobbie/wire"
)

// fail cleans up after m failed or was cancelled before its switch (the
// fence lifted, the target's copy aborted) and ends it.
func (r *moveRunner) fail(ctx context.Context, m state.MoveRecord, cause error) {
	why := cause.Error()
	switch {
	case context.Cause(ctx) == errMoveCancelled:
		why = errMoveCancelled.Error()
	case r.ctx.Err() != nil:
		why = MoveStopped
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), moveCleanupTimeout)
	if r.ctx.Err() != nil {
		cancel()
		cctx, cancel = context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	}
	// Both at once: they touch different shards.
	var unfence, abort error
	var wg sync.WaitGroup
	wg.Go(func() {
		unfence = r.retry(cctx, func(ctx context.Context) error { return r.call(ctx, m, m.FromShard, "unfence", nil, nil) })
	})
	wg.Go(func() {
		abort = r.retry(cctx, func(ctx context.Context) error { return r.call(ctx, m, m.ToShard, "abort", nil, nil) })
	})
	wg.Wait()
	cancel()
	if unfence != nil {
		why += fmt.Sprintf("; cleanup: unfence on source shard %s: %v", m.FromShard, unfence)
	}
	if abort != nil {
		why += fmt.Sprintf("; cleanup: abort on target shard %s: %v", m.ToShard, abort)
	}
	why = strings.ReplaceAll(why, "\n", "; ") // errors.Join's lines: the record's error is one line
	r.s.log.Warn("control: move failed", "tenant", m.TenantID, "namespace", m.Namespace, "move", m.ID, "err", why)
	r.s.backups.finish(r.ctx, func(ctx context.Context) error {
		_, err := r.s.EndMove(ctx, &state.EndMoveCmd{ID: m.ID, Failed: true, Error: why})
		if refused(err) {
			return nil // switched or ended meanwhile: nothing to record
		}
		return err
	})
}

// retry runs fn a few times, a second apart, until it succeeds or ctx ends.
func (r *moveRunner) retry(ctx context.Context, fn func(context.Context) error) error {
	var err error
	for range 3 {
		if err = fn(ctx); err == nil || ctx.Err() != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(time.Second):
		}
	}
	return err
}

// finish removes the source's copy of switched move m and completes it,
// retrying until both succeed, this node stops or no longer leads (the
// leader then finishes it). ctx is the move's: an operator's cancel
// cannot reach a switched move (cancel refuses one), losing the lead
// ends it here.
func (r *moveRunner) finish(ctx context.Context, m state.MoveRecord) {
	wait := 200 * time.Millisecond
	for {
		err := r.call(ctx, m, m.FromShard, "finish", wire.NamespaceMoveRequest{ToShard: m.ToShard}, nil)
		if err == nil {
			_, err = r.s.EndMove(ctx, &state.EndMoveCmd{ID: m.ID})
			if err == nil || refused(err) {
				return
			}
		}
		if !r.s.IsLeader() {
			return // the leader's loop finishes it
		}
		r.s.log.Warn("control: finish a switched move; retrying", "move", m.ID, "err", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		wait = min(2*wait, 5*time.Second)
	}
}

// runLoop takes over, every backupTick while this node leads and once it
// has led for Config.BackupOrphanAfter, the moves no runner of this node
// holds: an earlier leader's.
func (r *moveRunner) runLoop(ctx context.Context) {
	r.s.whileLeading(ctx, func(ledLong bool) {
		if ledLong {
			r.adoptOrphans()
		}
	})
}

// adoptOrphans runs every move that has not ended and that this node does
// not run: a switched one is finished, any other failed and cleaned up.
func (r *moveRunner) adoptOrphans() {
	var open []state.MoveRecord
	err := r.s.View(func(rd pebble.Reader) error {
		all, err := state.ListMoves(rd)
		for _, m := range all {
			if !m.Ended() {
				open = append(open, m)
			}
		}
		return err
	})
	if err != nil {
		r.s.log.Warn("control: move loop: read state", "err", err)
		return
	}
	for _, m := range open {
		if r.running(m.ID) || r.ctx.Err() != nil {
			continue
		}
		release := r.hold(m.ID)
		r.launch(m.ID, release, func(ctx context.Context) {
			if m.State == wire.MoveSwitched {
				r.finish(ctx, m)
				return
			}
			r.fail(ctx, m, errors.New(MoveLeaderChanged))
		})
	}
}

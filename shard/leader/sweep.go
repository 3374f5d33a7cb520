package leader

import (
	"context"
	"errors"

	"github.com/cockroachdb/pebble"

	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/shard/engine"
	"github.com/jobbie/jobbie/shard/keys"
)

// sweepBatch is the most jobs one sweep command names.
const sweepBatch = 1000

// timeSweeps are the job time indexes and the command that handles what
// came due in each.
var timeSweeps = []struct {
	kind byte
	op   replica.Op[engine.SweepCmd, int]
}{{keys.KindDue, engine.Promote}, {keys.KindLease, engine.ReclaimCounted}, {keys.KindExpire, engine.Expire}, {keys.KindPrune, engine.JobPrune}}

// sweepOnce proposes, per namespace, every job of each time index due at
// or before now, then fires the cron schedules whose run came, then prunes
// the finished batch and bulk records whose retention ran out and the
// Idempotency-Key records whose 24 h did. A namespace
// a move fences is left alone: its jobs, schedules and records wait (on
// the target, once moved).
func (l *Loops) sweepOnce(ctx context.Context, now int64) error {
	for _, ns := range engine.Namespaces(l.node.DB()) {
		if l.eng.Fenced(l.node.DB(), ns, now) {
			continue // a move holds it: its commands would be refused
		}
		for _, s := range timeSweeps {
			if err := l.sweepIndex(ctx, ns, s.kind, s.op, now); err != nil {
				return err
			}
		}
		if err := l.sweepSchedules(ctx, ns, now); err != nil {
			return err
		}
		if err := l.sweepRecords(ctx, ns, now); err != nil {
			return err
		}
		if err := l.sweepIdempotency(ctx, ns, now); err != nil {
			return err
		}
	}
	return nil
}

// sweepIndex proposes every job of one time index due at or before now.
func (l *Loops) sweepIndex(ctx context.Context, ns string, kind byte, op replica.Op[engine.SweepCmd, int], now int64) error {
	return l.sweepWindow(ns, kind, now, func(from int64) (bool, error) {
		lower := keys.Timed(ns, kind, from, "")
		upper := keys.Timed(ns, kind, now+1, "")
		for {
			ids, ats := l.dueIDs(lower, upper, ns, kind)
			if len(ids) == 0 {
				return true, nil
			}
			n, err := op.Propose(ctx, l.node, &engine.SweepCmd{NS: ns, IDs: ids})
			if err != nil {
				return false, err
			}
			if n < len(ids) && l.anyLive(ns, kind, ids, ats) {
				return false, nil // some were not due by the entry's clock: keep the range open
			}
			if len(ids) < sweepBatch {
				return true, nil
			}
			// The next batch starts after this one: its stale keys stay.
			lower = append(keys.Timed(ns, kind, ats[len(ats)-1], ids[len(ids)-1]), 0)
		}
	})
}

// sweepWindow runs one sweep of a time index. Jobs leave an index from its
// bottom as their times pass, leaving tombstones, so the sweep starts at
// the lowest time that may still hold a live key: where the last complete
// sweep ended, or lower if an apply inserted below it since
// (engine.TakeFloor). run reports whether it handled everything due; if
// not, or on error, the range stays open for the next tick.
func (l *Loops) sweepWindow(ns string, kind byte, now int64, run func(from int64) (complete bool, err error)) error {
	sk := ns + "\x00" + string(kind)
	from, seen := l.swept[sk]
	if floor := l.eng.TakeFloor(ns, kind); floor < from {
		from = floor
	}
	if !seen {
		from = 0
	}
	complete, err := run(from)
	if err != nil || !complete {
		l.eng.LowerFloor(ns, kind, from) // look here again next time
		return err
	}
	l.swept[sk] = now + 1
	return nil
}

// dueIDs lists up to sweepBatch jobs of one time index in [lower, upper),
// with the time each key holds.
func (l *Loops) dueIDs(lower, upper []byte, ns string, kind byte) (ids []string, ats []int64) {
	it, err := l.node.DB().NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
	if err != nil {
		return nil, nil
	}
	defer it.Close()
	for ok := it.First(); ok && len(ids) < sweepBatch; ok = it.Next() {
		if at, id, err := keys.ParseTimed(ns, kind, it.Key()); err == nil {
			ids, ats = append(ids, id), append(ats, at)
		}
	}
	return ids, ats
}

// anyLive reports, after a sweep command changed fewer jobs than it
// named, whether one it left still stands in the index as its key says
// (engine.TimedKeyLive): a job not due by the entry's clock. The others
// it left are stale keys (a job gone or in another state), which no
// sweep will change: the range may close over them rather than be
// proposed again at every tick. The jobs it changed left their keys.
func (l *Loops) anyLive(ns string, kind byte, ids []string, ats []int64) bool {
	db := l.node.DB()
	for i, id := range ids {
		if exists(db, keys.Timed(ns, kind, ats[i], id)) && engine.TimedKeyLive(db, ns, kind, ats[i], id) {
			return true
		}
	}
	return false
}

// exists reports whether r holds key; a read error answers true.
func exists(r pebble.Reader, key []byte) bool {
	_, closer, err := r.Get(key)
	if err != nil {
		return !errors.Is(err, pebble.ErrNotFound)
	}
	_ = closer.Close()
	return true
}

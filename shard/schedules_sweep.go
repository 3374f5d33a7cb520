package shard

import (
	"context"

	"github.com/cockroachdb/pebble"

	"github.com/jobbie/jobbie/shard/keys"
)

// sweepSchedules fires ns's schedules whose next run is at or before now.
//
// Due schedules are found with one seek in the run index
// (<ns> 00 'R' <next run> <id>), not by scanning every schedule: a
// namespace may hold many schedules of which few are due at any tick. Like
// the job time indexes, the scan starts at the lowest time that may still
// hold a live entry (see sweepIndex), so the tombstones of past runs are
// skipped.
//
// Each due schedule gets its own fire command naming the run time it fires
// for, with the run after it. The next run is computed from now, not from
// the run being fired: when several runs were missed (the shard was down
// or had no leader), the schedule fires once and moves on to the first run
// in the future instead of replaying every missed tick.
func (e *Engine) sweepSchedules(ctx context.Context, ns string, now int64) error {
	kind := keys.KindScheduleRun
	return e.sweepWindow(ns, kind, now, func(from int64) (bool, error) {
		lower := keys.Timed(ns, kind, from, "")
		upper := keys.Timed(ns, kind, now+1, "")
		complete := true
		for {
			due := e.dueSchedules(lower, upper, ns)
			for _, d := range due {
				fired, err := e.fireSchedule(ctx, ns, d.id, d.at, now)
				if err != nil {
					return false, err
				}
				// A refused fire (not due by the entry's clock, or changed
				// meanwhile) keeps the range open; the others still fire.
				complete = complete && fired
			}
			if len(due) < sweepBatch || !complete {
				return complete, nil
			}
		}
	})
}

type dueSchedule struct {
	id string
	at int64
}

func (e *Engine) dueSchedules(lower, upper []byte, ns string) []dueSchedule {
	it, err := e.node.DB().NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
	if err != nil {
		return nil
	}
	defer it.Close()
	var out []dueSchedule
	for ok := it.First(); ok && len(out) < sweepBatch; ok = it.Next() {
		if at, id, err := keys.ParseTimed(ns, keys.KindScheduleRun, it.Key()); err == nil {
			out = append(out, dueSchedule{id: id, at: at})
		}
	}
	return out
}

// fireSchedule proposes the fire of schedule id for run time at.
func (e *Engine) fireSchedule(ctx context.Context, ns, id string, at, now int64) (bool, error) {
	s, err := getSchedule(e.node.DB(), ns, id)
	if err != nil || s.NextRun != at {
		return false, nil // changed since the index was read
	}
	spec, err := parseCron(s.Cron, s.Timezone)
	if err != nil {
		// Stored specs were valid when stored; a zone that vanished from
		// tzdata cannot be fired, and must not block the other schedules.
		e.cfg.Logger.Warn("shard schedule: cannot parse stored schedule", "namespace", ns, "schedule", id, "err", err)
		return true, nil
	}
	c := &fireCmd{NS: ns, ID: id, RunAt: at, NextRun: spec.next(max(now, at)), JobID: e.newID("job_")}
	res, err := e.propose(ctx, cmdScheduleFire, c)
	if err != nil {
		return false, err
	}
	return res.(bool), nil
}

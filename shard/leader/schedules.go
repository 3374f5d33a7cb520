package leader

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
// hold a live entry (sweepWindow), so the tombstones of past runs are
// skipped.
//
// Each due schedule gets its own fire command naming the run time it fires
// for, with the run after it (service.FireSchedule). The next run is
// computed from now, not from the run being fired: when several runs were
// missed (the shard was down or had no leader), the schedule fires once
// and moves on to the first run in the future instead of replaying every
// missed tick.
func (l *Loops) sweepSchedules(ctx context.Context, ns string, now int64) error {
	kind := keys.KindScheduleRun
	return l.sweepWindow(ns, kind, now, func(from int64) (bool, error) {
		lower := keys.Timed(ns, kind, from, "")
		upper := keys.Timed(ns, kind, now+1, "")
		complete := true
		for {
			due := l.dueSchedules(lower, upper, ns)
			for _, d := range due {
				fired, err := l.svc.FireSchedule(ctx, ns, d.id, d.at, now)
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

func (l *Loops) dueSchedules(lower, upper []byte, ns string) []dueSchedule {
	it, err := l.node.DB().NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
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

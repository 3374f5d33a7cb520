package shard

import (
	"context"
	"time"

	"github.com/cockroachdb/pebble"

	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/shard/keys"
)

// sweepBatch is the most jobs one sweep command names.
const sweepBatch = 1000

// sweepLoop runs on every node and acts only while it leads: each tick it
// finds, per namespace, scheduled and retrying jobs that are due, leases
// that ran out, TTLs that passed and cron schedules whose run came, and
// proposes commands naming them.
// The handlers re-check every job, so a sweep racing a leader change or a
// worker's ack does no harm.
func (e *Engine) sweepLoop() {
	defer e.wg.Done()
	t := time.NewTicker(e.cfg.SweepInterval)
	defer t.Stop()
	for {
		select {
		case <-e.stop:
			return
		case <-t.C:
		}
		if !e.node.IsLeader() {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		if err := e.sweepOnce(ctx, time.Now().UnixNano()); err != nil {
			e.cfg.Logger.Warn("shard sweep", "err", err)
		}
		cancel()
	}
}

func (e *Engine) sweepOnce(ctx context.Context, now int64) error {
	for _, ns := range e.namespaces() {
		for _, s := range []struct {
			kind byte
			cmd  replica.CommandType
		}{{keys.KindDue, cmdPromote}, {keys.KindLease, cmdReclaim}, {keys.KindExpire, cmdExpire},
			{keys.KindPrune, cmdJobPrune}} {
			if err := e.sweepIndex(ctx, ns, s.kind, s.cmd, now); err != nil {
				return err
			}
		}
		if err := e.sweepSchedules(ctx, ns, now); err != nil {
			return err
		}
	}
	return nil
}

// sweepIndex proposes every job of one time index due at or before now.
func (e *Engine) sweepIndex(ctx context.Context, ns string, kind byte, cmd replica.CommandType, now int64) error {
	return e.sweepWindow(ns, kind, now, func(from int64) (bool, error) {
		complete := true
		err := e.sweepRange(ctx, ns, kind, cmd, from, now, &complete)
		return complete, err
	})
}

// sweepWindow runs one sweep of a time index. It starts at the lowest time
// that may still hold a live key: where the last complete sweep ended, or
// lower if an apply inserted below it since. run reports whether it
// handled everything due; if not, or on error, the range stays open for
// the next tick.
func (e *Engine) sweepWindow(ns string, kind byte, now int64, run func(from int64) (complete bool, err error)) error {
	sk := floorKey(ns, kind)
	from, seen := e.swept[sk]
	if floor := e.floors.take(ns, kind); floor < from {
		from = floor
	}
	if !seen {
		from = 0
	}
	complete, err := run(from)
	if err != nil || !complete {
		e.floors.inserted(ns, kind, from) // look here again next time
		return err
	}
	e.swept[sk] = now + 1
	return nil
}

func (e *Engine) sweepRange(ctx context.Context, ns string, kind byte, cmd replica.CommandType, from, now int64, complete *bool) error {
	lower := keys.Timed(ns, kind, from, "")
	upper := keys.Timed(ns, kind, now+1, "")
	for {
		ids := e.dueIDs(lower, upper, ns, kind)
		if len(ids) == 0 {
			return nil
		}
		res, err := e.propose(ctx, cmd, &sweepCmd{NS: ns, IDs: ids})
		if err != nil {
			return err
		}
		if res.(int) < len(ids) {
			// Some were not due by the entry's clock: keep the range open.
			*complete = false
			return nil
		}
		if len(ids) < sweepBatch {
			return nil
		}
	}
}

func (e *Engine) dueIDs(lower, upper []byte, ns string, kind byte) []string {
	it, err := e.node.DB().NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
	if err != nil {
		return nil
	}
	defer it.Close()
	var ids []string
	for ok := it.First(); ok && len(ids) < sweepBatch; ok = it.Next() {
		if _, id, err := keys.ParseTimed(ns, kind, it.Key()); err == nil {
			ids = append(ids, id)
		}
	}
	return ids
}

// namespaces lists the namespaces with state on this shard.
func (e *Engine) namespaces() []string {
	p := keys.RegistryPrefix()
	it, err := e.node.DB().NewIter(&pebble.IterOptions{LowerBound: p, UpperBound: keys.PrefixEnd(p)})
	if err != nil {
		return nil
	}
	defer it.Close()
	var out []string
	for ok := it.First(); ok; ok = it.Next() {
		out = append(out, keys.RegistryNamespace(it.Key()))
	}
	return out
}

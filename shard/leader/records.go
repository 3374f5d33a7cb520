package leader

import (
	"context"

	"github.com/cockroachdb/pebble"

	"github.com/jobbie/jobbie/shard/engine"
	"github.com/jobbie/jobbie/shard/keys"
)

// sweepRecords proposes RecordPrune for ns's finished batch and bulk
// operation records whose retention ran out (the record prune index),
// from the lowest time that may still hold a live entry, as sweepIndex
// does for jobs.
func (l *Loops) sweepRecords(ctx context.Context, ns string, now int64) error {
	return sweepTimed(l, ns, keys.KindRecordPrune, now,
		func(at int64) []byte { return keys.RecordPruneEntry(ns, at, "") },
		func(k []byte) (engine.RecordItem, bool) {
			at, id, err := keys.ParseRecordPrune(ns, k)
			return engine.RecordItem{At: at, ID: id}, err == nil
		},
		func(items []engine.RecordItem) (int, error) {
			return engine.RecordPrune.Propose(ctx, l.node, &engine.RecordPruneCmd{NS: ns, Items: items})
		})
}

// sweepIdempotency proposes IdemSweep for ns's Idempotency-Key records
// whose 24 h ran out (their expiry index), as sweepRecords does.
func (l *Loops) sweepIdempotency(ctx context.Context, ns string, now int64) error {
	return sweepTimed(l, ns, keys.KindIdempotencyExpiry, now,
		func(at int64) []byte { return keys.IdempotencyExpiry(ns, at, "") },
		func(k []byte) (engine.IdemItem, bool) {
			at, key, err := keys.ParseIdempotencyExpiry(ns, k)
			return engine.IdemItem{At: at, Key: key}, err == nil
		},
		func(items []engine.IdemItem) (int, error) {
			return engine.IdemSweep.Propose(ctx, l.node, &engine.IdemSweepCmd{NS: ns, Items: items})
		})
}

// sweepTimed proposes prune for the entries of one of ns's time indexes
// (key(at) is its key at a time, parse an entry's item) that are due by
// now, sweepBatch at a time, from the lowest time that may still hold a
// live entry (sweepWindow). An entry that applies fewer than it was given
// found some not due by its clock: the range stays open for the next tick.
func sweepTimed[T any](l *Loops, ns string, kind byte, now int64, key func(at int64) []byte,
	parse func(k []byte) (T, bool), prune func(items []T) (int, error)) error {
	return l.sweepWindow(ns, kind, now, func(from int64) (bool, error) {
		lower, upper := key(from), key(now+1)
		for {
			items := dueIn(l, lower, upper, parse)
			if len(items) == 0 {
				return true, nil
			}
			n, err := prune(items)
			if err != nil {
				return false, err
			}
			if n < len(items) {
				return false, nil // not due by the entry's clock: keep the range open
			}
			if len(items) < sweepBatch {
				return true, nil
			}
		}
	})
}

// dueIn reads up to sweepBatch entries of [lower, upper).
func dueIn[T any](l *Loops, lower, upper []byte, parse func(k []byte) (T, bool)) []T {
	it, err := l.node.DB().NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
	if err != nil {
		return nil
	}
	defer it.Close()
	var out []T
	for ok := it.First(); ok && len(out) < sweepBatch; ok = it.Next() {
		if item, ok := parse(it.Key()); ok {
			out = append(out, item)
		}
	}
	return out
}

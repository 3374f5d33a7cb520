package leader

import (
	"context"

	"github.com/cockroachdb/pebble"

	"github.com/jobbie/jobbie/shard/engine"
	"github.com/jobbie/jobbie/shard/keys"
)

// sweepIdempotency proposes IdemSweep for ns's Idempotency-Key records
// whose 24 h ran out (their expiry index), from the lowest time that may
// still hold a live entry, as sweepRecords does.
func (l *Loops) sweepIdempotency(ctx context.Context, ns string, now int64) error {
	return l.sweepWindow(ns, keys.KindIdempotencyExpiry, now, func(from int64) (bool, error) {
		lower := keys.IdempotencyExpiry(ns, from, "")
		upper := keys.IdempotencyExpiry(ns, now+1, "")
		for {
			items := l.dueIdempotency(lower, upper, ns)
			if len(items) == 0 {
				return true, nil
			}
			n, err := engine.IdemSweep.Propose(ctx, l.node, &engine.IdemSweepCmd{NS: ns, Items: items})
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

func (l *Loops) dueIdempotency(lower, upper []byte, ns string) []engine.IdemItem {
	it, err := l.node.DB().NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
	if err != nil {
		return nil
	}
	defer it.Close()
	var out []engine.IdemItem
	for ok := it.First(); ok && len(out) < sweepBatch; ok = it.Next() {
		if at, key, err := keys.ParseIdempotencyExpiry(ns, it.Key()); err == nil {
			out = append(out, engine.IdemItem{At: at, Key: key})
		}
	}
	return out
}

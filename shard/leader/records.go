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
	kind := keys.KindRecordPrune
	return l.sweepWindow(ns, kind, now, func(from int64) (bool, error) {
		lower := keys.RecordPruneEntry(ns, from, "")
		upper := keys.RecordPruneEntry(ns, now+1, "")
		for {
			items := l.dueRecords(lower, upper, ns)
			if len(items) == 0 {
				return true, nil
			}
			n, err := engine.RecordPrune.Propose(ctx, l.node, &engine.RecordPruneCmd{NS: ns, Items: items})
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

func (l *Loops) dueRecords(lower, upper []byte, ns string) []engine.RecordItem {
	it, err := l.node.DB().NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
	if err != nil {
		return nil
	}
	defer it.Close()
	var out []engine.RecordItem
	for ok := it.First(); ok && len(out) < sweepBatch; ok = it.Next() {
		if at, id, err := keys.ParseRecordPrune(ns, it.Key()); err == nil {
			out = append(out, engine.RecordItem{At: at, ID: id})
		}
	}
	return out
}

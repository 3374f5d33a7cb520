package leader

import (
	"context"

	"github.com/jobbie/jobbie/shard/engine"
)

// sweepHistory starts queue history when this node leads a shard that
// keeps none (engine.HistoryStart), then every HistoryInterval records
// each namespace's samples of its busy queues (engine.HistorySample: one
// command per namespace, none for a namespace with nothing pending or
// active), and every HistoryTrimInterval trims each namespace's old
// buckets (engine.HistoryTrim). The samples are read from the leader's
// own store and carried in the command, so every member records the same.
func (l *Loops) sweepHistory(ctx context.Context, now int64) error {
	db := l.node.DB()
	if !l.eng.HistoryOn(db) {
		if _, err := engine.HistoryStart.Propose(ctx, l.node, &engine.HistoryStartCmd{}); err != nil {
			return err
		}
	}
	sample := l.sampleAt == 0 || now-l.sampleAt >= int64(l.cfg.HistoryInterval)
	trim := l.historyTrimAt == 0 || now-l.historyTrimAt >= int64(l.cfg.HistoryTrimInterval)
	if !sample && !trim {
		return nil
	}
	for _, ns := range engine.Namespaces(db) {
		if l.eng.Fenced(db, ns, now) {
			continue // a move holds it: the command would be refused
		}
		// A namespace whose command fails (a restore holds it) waits for
		// the next round; the others go on.
		if sample {
			if s := l.svc.HistorySamples(ns); len(s) > 0 {
				if _, err := engine.HistorySample.Propose(ctx, l.node, &engine.HistorySampleCmd{NS: ns, Samples: s}); err != nil {
					l.cfg.Logger.Warn("shard queue history sample", "ns", ns, "err", err)
				}
			}
		}
		if trim {
			if _, err := engine.HistoryTrim.Propose(ctx, l.node, &engine.HistoryTrimCmd{NS: ns}); err != nil {
				l.cfg.Logger.Warn("shard queue history trim", "ns", ns, "err", err)
			}
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	if sample {
		l.sampleAt = now
	}
	if trim {
		l.historyTrimAt = now
	}
	return nil
}

package leader

import (
	"context"

	"github.com/jobbie/jobbie/shard/engine"
)

// eventTrimStep bounds the events one trim reads for their age in a
// namespace; a longer backlog is trimmed over the next rounds.
const eventTrimStep = 10_000

// sweepEvents starts the event log, wide and detailed
// (engine.EventLogStartDetailed), counted (engine.EventLogStartCounted),
// in blocks (engine.EventLogStartBlocks) and kept across restores and
// moves (engine.EventLogStartKept), when this node leads a shard whose
// log is off or is not yet all of these (before anything the loops
// propose changes a job), then every
// EventTrimInterval trims each namespace's log to its retention: its
// plan's, recorded first when a request said otherwise
// (service.EventRetention), else EventRetention. The leader picks the
// point from its own state (engine.EventTrimPoint) and proposes it, so
// every member deletes the same events. The same round trims each
// namespace's audit log (trimAudit).
func (l *Loops) sweepEvents(ctx context.Context, now int64) error {
	db := l.node.DB()
	if !l.eng.EventLogDetailed(db) {
		if _, err := engine.EventLogStartDetailed.Propose(ctx, l.node, &engine.EventLogStartCmd{}); err != nil {
			return err
		}
	}
	if !l.eng.EventLogCounted(db) {
		if _, err := engine.EventLogStartCounted.Propose(ctx, l.node, &engine.EventLogStartCmd{}); err != nil {
			return err
		}
	}
	if !l.eng.EventLogBlocks(db) {
		if _, err := engine.EventLogStartBlocks.Propose(ctx, l.node, &engine.EventLogStartCmd{}); err != nil {
			return err
		}
	}
	if !l.eng.EventLogKept(db) {
		if _, err := engine.EventLogStartKept.Propose(ctx, l.node, &engine.EventLogStartCmd{}); err != nil {
			return err
		}
	}
	if l.trimAt != 0 && now-l.trimAt < int64(l.cfg.EventTrimInterval) {
		return nil
	}
	for _, ns := range engine.Namespaces(db) {
		if l.eng.Fenced(db, ns, now) {
			continue // a move holds it: the trim would be refused
		}
		if err := l.trimAudit(ctx, db, ns, now); err != nil {
			return err
		}
		ret, err := l.svc.EventRetention(ctx, ns, l.cfg.EventRetention)
		if err != nil {
			l.cfg.Logger.Warn("shard event log retention", "ns", ns, "err", err) // trimmed by the record meanwhile
		}
		count, counted := l.eng.EventCount(db, ns)
		if !counted {
			count = -1
		}
		through, ok := engine.EventTrimPoint(db, ns, ret, now, eventTrimStep, count)
		if !ok {
			continue
		}
		if _, err := engine.EventTrim.Propose(ctx, l.node, &engine.EventTrimCmd{NS: ns, Through: through}); err != nil {
			return err
		}
	}
	l.trimAt = now
	return nil
}

package leader

import (
	"context"

	"github.com/jobbie/jobbie/shard/engine"
)

// eventTrimStep bounds the events one trim reads for their age in a
// namespace; a longer backlog is trimmed over the next rounds.
const eventTrimStep = 10_000

// sweepEvents starts the event log, wide and detailed
// (engine.EventLogStartDetailed), when this node leads a shard whose log
// is off or is not yet (before anything the loops propose changes a
// job), then every
// EventTrimInterval trims each namespace's log to EventRetention: the
// leader picks the point from its own state (engine.EventTrimPoint) and
// proposes it, so every member deletes the same events.
func (l *Loops) sweepEvents(ctx context.Context, now int64) error {
	db := l.node.DB()
	if !l.eng.EventLogDetailed(db) {
		if _, err := engine.EventLogStartDetailed.Propose(ctx, l.node, &engine.EventLogStartCmd{}); err != nil {
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
		through, ok := engine.EventTrimPoint(db, ns, l.cfg.EventRetention, now, eventTrimStep)
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

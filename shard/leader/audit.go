package leader

import (
	"context"

	"github.com/cockroachdb/pebble"

	"github.com/jobbie/jobbie/shard/engine"
)

// trimAudit deletes ns's audit records past its plan's retention (the
// days its last record carried, engine.AuditRetentionDays), in the
// event log's trim round: the leader picks the bound from its clock and
// proposes it, so every member deletes the same records.
func (l *Loops) trimAudit(ctx context.Context, db pebble.Reader, ns string, now int64) error {
	before, ok := engine.AuditTrimPoint(db, ns, now)
	if !ok {
		return nil
	}
	_, err := engine.AuditTrim.Propose(ctx, l.node, &engine.AuditTrimCmd{NS: ns, Before: before})
	return err
}

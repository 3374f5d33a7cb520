package leader

import (
	"context"
	"errors"
	"time"

	"github.com/jobbie/jobbie/shard/engine"
)

// DefaultRestoreIdle is how long a restore may go without a chunk before
// the leader aborts it, when nothing on the leader drives it.
const DefaultRestoreIdle = 10 * time.Minute

// sweepRestores aborts the restores left behind by a leader that was lost
// mid-restore (or whose own abort failed): their namespace would answer
// 503 until control restored again or deleted it. A restore is left
// behind when its last begin or chunk is RestoreIdle old and this node's
// service is not writing it; restores only run on the leader, so one it
// does not drive has no writer. The abort carries the bound, and its apply
// checks it again by the entry's clock, so a chunk that committed since
// keeps the restore.
//
// It first has the apply refuse client commands into a namespace being
// restored (engine.RestoreStartRefusing), once: the state keeps it.
func (l *Loops) sweepRestores(ctx context.Context, now int64) {
	if !engine.RestoreRefusing(l.node.DB()) {
		if _, err := engine.RestoreStartRefusing.Propose(ctx, l.node, &engine.RestoreStartCmd{}); err != nil {
			l.cfg.Logger.Warn("shard: starting the restore gate", "err", err)
		}
	}
	idle := int64(l.cfg.RestoreIdle)
	for ns, m := range l.eng.RestoreMarks(l.node.DB()) {
		if now-m.At < idle || l.svc.Driving(m.Token) {
			continue
		}
		_, err := engine.RestoreAbort.Propose(ctx, l.node, &engine.RestoreTokenCmd{NS: ns, Token: m.Token, Idle: idle})
		switch {
		case err == nil:
			l.cfg.Logger.Info("shard: aborted a restore nothing drove", "ns", ns, "idle_since", time.Unix(0, m.At).UTC())
		case errors.Is(err, engine.ErrRestoreNotIdle), errors.Is(err, engine.ErrRestoreGone):
		default:
			l.cfg.Logger.Warn("shard: abort of an idle restore", "ns", ns, "err", err)
		}
	}
}

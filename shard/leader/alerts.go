package leader

import (
	"context"
	"time"
)

// DefaultAlertInterval is how often alert rules are evaluated by default.
const DefaultAlertInterval = 15 * time.Second

// alertLoop evaluates the alert rules every AlertInterval while this node
// leads (service.EvaluateAlerts); losing the lead forgets what the
// evaluation remembered, so a later lead starts afresh.
func (l *Loops) alertLoop() {
	defer l.wg.Done()
	t := l.cfg.Clock.NewTicker(l.cfg.AlertInterval)
	defer t.Stop()
	leading := false
	for {
		select {
		case <-l.stop:
			return
		case <-t.Chan():
		}
		if !l.node.IsLeader() {
			if leading {
				l.svc.AlertsLost()
				leading = false
			}
			continue
		}
		leading = true
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		if err := l.svc.EvaluateAlerts(ctx, l.lastFetch); err != nil {
			l.cfg.Logger.Warn("shard alert evaluation", "err", err)
		}
		cancel()
	}
}

// lastFetch is Config.LastFetch, or never.
func (l *Loops) lastFetch(ns, queue string) time.Time {
	if l.cfg.LastFetch == nil {
		return time.Time{}
	}
	return l.cfg.LastFetch(ns, queue)
}

package leader

import (
	"context"
	"time"

	"github.com/jobbie/jobbie/internal/replica"
)

// leaderDuties runs what only the leader does on taking the lead: make
// sure a signing key exists and the state holds this node's HTTP address.
// It checks again on every leadership change. Every AuditTrimInterval it
// trims the tenants' audit logs to their retention (Service.TrimAudit).
func (s *Leader) leaderDuties(ctx context.Context, node *replica.Node) {
	changes, cancel := node.Subscribe()
	defer cancel()
	t := time.NewTicker(time.Second)
	defer t.Stop()
	done := false
	var trimmed time.Time
	trimEvery := s.cfg.AuditTrimInterval
	if trimEvery <= 0 {
		trimEvery = time.Minute
	}
	for {
		if node.IsLeader() && time.Since(trimmed) >= trimEvery {
			if err := s.TrimAudit(ctx); err != nil && ctx.Err() == nil {
				s.log.Warn("control: audit trim", "err", err)
			} else {
				trimmed = time.Now()
			}
		}
		if node.IsLeader() && !done {
			err := s.EnsureSigningKey(ctx)
			if err == nil {
				err = s.RecordMemberHTTP(ctx, s.cfg.NodeID, s.cfg.AdvertisedHTTP())
			}
			if err != nil && ctx.Err() == nil {
				s.log.Warn("control: leader duties", "err", err)
			} else {
				done = err == nil
			}
		}
		if !node.IsLeader() {
			done = false
		}
		select {
		case <-ctx.Done():
			return
		case <-changes:
		case <-t.C:
		}
	}
}

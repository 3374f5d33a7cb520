package service

import (
	"context"

	"github.com/cockroachdb/pebble"

	"github.com/jobbie/jobbie/control/billing"
	"github.com/jobbie/jobbie/control/state"
	"github.com/jobbie/jobbie/wire"
)

// Quota is tenant tid's wire.TenantQuota now.
func (s *Service) Quota(ctx context.Context, tid string) (wire.TenantQuota, error) {
	now := s.cfg.Clock.Now()
	return ViewValue(s, func(r pebble.Reader) (wire.TenantQuota, error) {
		if _, err := state.FindTenant(r, tid); err != nil {
			return wire.TenantQuota{}, err
		}
		tp, err := state.TenantPlanAt(r, tid, now)
		if err != nil {
			return wire.TenantQuota{}, err
		}
		month := billing.InvoiceMonth(now)
		q := wire.TenantQuota{TenantID: tid, Plan: tp.Plan.Name, Limits: tp.Plan.Limits, Month: month}
		if q.Limits.MonthlyExecutions == nil {
			return q, nil
		}
		q.Executions, err = state.MonthExecutions(r, tid, month)
		return q, err
	})
}

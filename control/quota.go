package control

import (
	"context"
	"time"

	"github.com/cockroachdb/pebble"
	"github.com/gofiber/fiber/v2"

	"github.com/jobbie/jobbie/wire"
)

// Quota is tenant tid's wire.TenantQuota now.
func (s *Server) Quota(ctx context.Context, tid string) (wire.TenantQuota, error) {
	now := s.cfg.Clock.Now()
	return viewValue(s, func(r pebble.Reader) (wire.TenantQuota, error) {
		if _, err := findTenant(r, tid); err != nil {
			return wire.TenantQuota{}, err
		}
		tp, err := tenantPlanAt(r, tid, now)
		if err != nil {
			return wire.TenantQuota{}, err
		}
		month := invoiceMonth(now)
		q := wire.TenantQuota{TenantID: tid, Plan: tp.Plan.Name, Limits: tp.Plan.Limits, Month: month}
		if q.Limits.MonthlyExecutions == nil {
			return q, nil
		}
		err = scanUsage(r, tid, "", month, month.AddDate(0, 1, 0), func(_ string, _ time.Time, _ string, m wire.ShardMeters) {
			q.Executions += m.Executions
		})
		return q, err
	})
}

func (s *Server) getQuota(c *fiber.Ctx) error {
	q, err := s.Quota(c.UserContext(), c.Params("tid"))
	if err != nil {
		return err
	}
	return c.JSON(q)
}

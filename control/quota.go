package control

import (
	"context"
	"time"

	"github.com/cockroachdb/pebble"
	"github.com/gofiber/fiber/v2"

	"github.com/jobbie/jobbie/wire"
)

// TenantQuota is GET /internal/v1/tenants/{tid}/quota: what a gateway
// needs to enforce a tenant's plan at once, the limits of the plan in
// effect and, when the plan caps monthly executions, the month's
// executions so far as the ledger has them (behind by the metering lag).
type TenantQuota struct {
	TenantID   string          `json:"tenant_id"`
	Plan       string          `json:"plan"`
	Limits     wire.PlanLimits `json:"limits"`
	Month      time.Time       `json:"month"`      // the start of the UTC month Executions counts
	Executions int64           `json:"executions"` // 0 unless Limits.MonthlyExecutions is set
}

// Quota is tenant tid's TenantQuota now.
func (s *Server) Quota(ctx context.Context, tid string) (TenantQuota, error) {
	now := s.cfg.Clock.Now()
	return viewValue(s, func(r pebble.Reader) (TenantQuota, error) {
		if _, err := findTenant(r, tid); err != nil {
			return TenantQuota{}, err
		}
		tp, err := tenantPlanAt(r, tid, now)
		if err != nil {
			return TenantQuota{}, err
		}
		month := invoiceMonth(now)
		q := TenantQuota{TenantID: tid, Plan: tp.Plan.Name, Limits: tp.Plan.Limits, Month: month}
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

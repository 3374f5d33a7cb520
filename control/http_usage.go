package control

import (
	"context"
	"fmt"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/jobbie/jobbie/control/state"
	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// Usage endpoints for gateways: a tenant's usage (GET
// /internal/v1/tenants/{tid}/usage), and the api request counts each
// gateway pushes (POST /internal/v1/usage/api-requests).

func (s *Server) getUsage(c *fiber.Ctx) error {
	q, err := ParseUsageQuery(s.cfg.Clock.Now(), c.Query("from"), c.Query("to"), c.Query("granularity"), c.Query("namespace"))
	if err != nil {
		return err
	}
	u, err := s.Usage(c.UserContext(), c.Params("tid"), q)
	if err != nil {
		return err
	}
	return c.JSON(u)
}

func (s *Server) postAPIRequests(c *fiber.Ctx) error {
	var req wire.APIRequestsReport
	if err := decode(c, &req); err != nil {
		return err
	}
	if err := s.RecordAPIRequests(c.UserContext(), req); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}

// RecordAPIRequests stores a gateway's counts (a bad report is a 400
// naming the field, and stores nothing).
func (s *Server) RecordAPIRequests(ctx context.Context, req wire.APIRequestsReport) error {
	if !shardIDRE.MatchString(req.Gateway) {
		return apierr.Field("gateway", "gateway must be 1-63 letters, digits, '.', '_' or '-', starting with a letter or digit")
	}
	if len(req.Counts) > wire.MaxAPIRequestCounts {
		return apierr.Field("counts", "counts holds %d entries, over the limit of %d: send them in several reports", len(req.Counts), wire.MaxAPIRequestCounts)
	}
	cmd := state.PutAPIRequestsCmd{Gateway: req.Gateway, Counts: make([]state.APIRequestCount, 0, len(req.Counts))}
	for i, n := range req.Counts {
		field := fmt.Sprintf("counts[%d].", i)
		switch {
		case tenancy.ValidateTenantID(n.TenantID) != nil:
			return apierr.Field(field+"tenant_id", "tenant_id %q is not a tenant id", n.TenantID)
		case n.Hour.IsZero() || !n.Hour.Equal(n.Hour.Truncate(time.Hour)):
			return apierr.Field(field+"hour", "hour must be the start of an hour")
		case n.Count < 0:
			return apierr.Field(field+"count", "count must not be negative")
		}
		cmd.Counts = append(cmd.Counts, state.APIRequestCount{Tenant: n.TenantID, Hour: n.Hour.Unix(), Count: uint64(n.Count)})
	}
	if len(cmd.Counts) == 0 {
		return nil
	}
	_, err := propose(ctx, s, state.OpPutAPIRequests, &cmd)
	return err
}

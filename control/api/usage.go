package api

import (
	"github.com/gofiber/fiber/v2"

	"github.com/jobbie/jobbie/control/service"
	"github.com/jobbie/jobbie/wire"
)

// Usage endpoints for gateways: a tenant's usage (GET
// /internal/v1/tenants/{tid}/usage), and the api request counts each
// gateway pushes (POST /internal/v1/usage/api-requests).

func (s *Server) getUsage(c *fiber.Ctx) error {
	q, err := service.ParseUsageQuery(s.cfg.Clock.Now(), c.Query("from"), c.Query("to"), c.Query("granularity"), c.Query("namespace"))
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

func (s *Server) getQuota(c *fiber.Ctx) error {
	q, err := s.Quota(c.UserContext(), c.Params("tid"))
	if err != nil {
		return err
	}
	return c.JSON(q)
}

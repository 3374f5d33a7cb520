package api

import (
	"github.com/gofiber/fiber/v2"

	"github.com/jobbie/jobbie/control/service"
	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/wire"
)

// The gateways' internal audit endpoints: append one record of a
// tenant's request, read a page of the tenant's records.

func (s *Server) postAudit(c *fiber.Ctx) error {
	var req service.AuditAppendRequest
	if err := decode(c, &req); err != nil {
		return err
	}
	if err := s.AppendAudit(c.UserContext(), c.Params("tid"), req); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}

func (s *Server) getAudit(c *fiber.Ctx) error {
	f, limit, field, err := wire.ParseAuditFilter(func(k string) string { return c.Query(k) })
	if err != nil {
		return apierr.Field(field, "%v", err)
	}
	p, err := s.Audit(c.UserContext(), c.Params("tid"), &f, c.Query("after"), limit)
	if err != nil {
		return err
	}
	return c.JSON(p)
}

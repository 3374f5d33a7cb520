package api

import (
	"github.com/gofiber/fiber/v2"

	"github.com/jobbie/jobbie/internal/pki"
)

// usageRoutes serves GET /internal/v1/usage, a shard's hourly usage
// buckets (wire.UsagePage), to control, which pulls them into its ledger,
// and to operators. The node answers from its own applied state, leader
// or not: the counters are absolute and applied_at says how current they
// are (service.Usage).
func (s *Server) usageRoutes() {
	s.app.Get("/internal/v1/usage", pki.Require(pki.Roles(pki.RoleControl, pki.RoleOperator), nil), func(c *fiber.Ctx) error {
		page, err := s.svc.Usage(c.Query("since"), c.Query("cursor"), c.Query("limit"))
		if err != nil {
			return err
		}
		page.ShardID = s.cfg.ShardID
		return c.JSON(page)
	})
}

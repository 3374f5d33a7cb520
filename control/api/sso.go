package api

import (
	"github.com/gofiber/fiber/v2"

	"github.com/jobbie/jobbie/control/service"
	"github.com/jobbie/jobbie/wire"
)

// The gateways' internal SSO endpoints: a tenant's configuration (never
// its secret), and the sign-in lookup, which alone answers the secret,
// for the gateway's token exchange.

func (s *Server) getSSO(c *fiber.Ctx) error {
	cfg, err := s.SSO(c.UserContext(), c.Params("tid"))
	if err != nil {
		return err
	}
	return c.JSON(cfg)
}

func (s *Server) putSSO(c *fiber.Ctx) error {
	var req wire.SSORequest
	if err := decode(c, &req); err != nil {
		return err
	}
	cfg, err := s.PutSSO(c.UserContext(), c.Params("tid"), req)
	if err != nil {
		return err
	}
	return c.JSON(cfg)
}

func (s *Server) deleteSSO(c *fiber.Ctx) error {
	if err := s.DeleteSSO(c.UserContext(), c.Params("tid")); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}

// getSSOSignIn is GET /internal/v1/sso?tenant_id=|tenant=|domain=.
func (s *Server) getSSOSignIn(c *fiber.Ctx) error {
	in, err := s.SSOSignIn(c.UserContext(), service.SSOLookup{TenantID: c.Query("tenant_id"), TenantName: c.Query("tenant"), Domain: c.Query("domain")})
	if err != nil {
		return err
	}
	return c.JSON(in)
}

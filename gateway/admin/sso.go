package admin

import (
	"github.com/gofiber/fiber/v2"

	"github.com/jobbie/jobbie/gateway/admitted"
	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/outbound"
	"github.com/jobbie/jobbie/wire"
)

// The tenant's console sign-in through its identity provider (GET, PUT,
// DELETE /api/v1/sso; sso.manage, the owner's alone). Control checks and
// keeps the configuration; the client secret is write-only: no answer
// carries it.

// GetSSO answers the configuration, without its secret.
func (a *Admin) GetSSO(c *fiber.Ctx, r *admitted.Request) error {
	cfg, err := a.control.SSO(a.ctx, r.RequestID, r.Key.TenantID)
	if err != nil {
		return a.tell(r, err)
	}
	return c.JSON(cfg)
}

// PutSSO replaces the configuration. The issuer is held to the egress
// guard's URL rules here (https, a host, an allowed port); whether its
// address is a private one is checked when the gateway calls it.
func (a *Admin) PutSSO(c *fiber.Ctx, r *admitted.Request) error {
	var in wire.SSORequest
	if err := decodeBody(c, &in); err != nil {
		return err
	}
	if err := apierr.Invalid(in.Check()); err != nil {
		return err
	}
	if err := outbound.CheckURL(in.IssuerURL, nil); err != nil {
		return apierr.Field("issuer_url", "%v", err)
	}
	cfg, err := a.control.PutSSO(a.ctx, r.RequestID, r.Key.TenantID, in)
	if err != nil {
		return a.tell(r, err)
	}
	return c.JSON(cfg)
}

// DeleteSSO ends sign-in through the provider; the sessions it began end
// when their gateways next check (admission's ssoConfigs).
func (a *Admin) DeleteSSO(c *fiber.Ctx, r *admitted.Request) error {
	if err := a.control.DeleteSSO(a.ctx, r.RequestID, r.Key.TenantID); err != nil {
		return a.tell(r, err)
	}
	return c.SendStatus(fiber.StatusNoContent)
}

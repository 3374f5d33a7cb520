package admin

import (
	"context"
	"log/slog"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/jonboulle/clockwork"

	"github.com/jobbie/jobbie/gateway/admission"
	"github.com/jobbie/jobbie/gateway/admitted"
	"github.com/jobbie/jobbie/gateway/controlapi"
	"github.com/jobbie/jobbie/gateway/limits"
	"github.com/jobbie/jobbie/gateway/proxy"
	"github.com/jobbie/jobbie/gateway/selfhosted"
	"github.com/jobbie/jobbie/internal/apierr"
)

// Config is what tenant administration works with. Tunnels is nil on a
// gateway without a tunnel listener.
type Config struct {
	Control      controlapi.Control
	Gate         *admission.Gate
	Proxy        *proxy.Proxy
	Schedules    *limits.Schedules
	Tunnels      *selfhosted.Tunnels
	Clock        clockwork.Clock
	Logger       *slog.Logger
	WriteTimeout time.Duration // each write of a backup download to the client
}

// Admin serves tenant administration: each of its endpoints is a method
// taking an admitted request.
type Admin struct {
	control      controlapi.Control
	gate         *admission.Gate
	proxy        *proxy.Proxy
	schedules    *limits.Schedules
	tunnels      *selfhosted.Tunnels
	clock        clockwork.Clock
	log          *slog.Logger
	ctx          context.Context // ends when the gateway stops
	writeTimeout time.Duration
}

// New builds tenant administration; ctx bounds its calls to control.
func New(ctx context.Context, cfg Config) *Admin {
	return &Admin{control: cfg.Control, gate: cfg.Gate, proxy: cfg.Proxy, schedules: cfg.Schedules, tunnels: cfg.Tunnels,
		clock: cfg.Clock, log: cfg.Logger, ctx: ctx, writeTimeout: cfg.WriteTimeout}
}

// tell is what the tenant is told of a failed call to control made for r
// (controlapi.ForTenant); nil stays nil.
func (a *Admin) tell(r *admitted.Request, err error) error {
	return controlapi.ForTenant(a.log, r.RequestID, err)
}

// decodeBody decodes a JSON request body strictly (apierr.DecodeJSON):
// unknown fields are refused, as everywhere in the API.
func decodeBody(c *fiber.Ctx, out any) error {
	return apierr.DecodeJSON(c.Request().Body(), out, false)
}

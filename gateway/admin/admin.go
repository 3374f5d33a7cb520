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
	"github.com/jobbie/jobbie/wire"
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

// keyed is a.ctx carrying r's Idempotency-Key to the create of control
// called with it, and what control then says of it; nil when r has none.
func (a *Admin) keyed(r *admitted.Request) (context.Context, *controlapi.Idempotent) {
	if r.IdempotencyKey == "" {
		return a.ctx, nil
	}
	idem := &controlapi.Idempotent{Key: r.IdempotencyKey}
	return controlapi.WithIdempotency(a.ctx, idem), idem
}

// created answers a create with status and v; a replay of an earlier
// request's create (idem.Replayed) is 200 with Idempotency-Replayed, as a
// shard answers one: nothing was created by this request.
func created(c *fiber.Ctx, idem *controlapi.Idempotent, status int, v any) error {
	if idem != nil && idem.Replayed {
		status = fiber.StatusOK
		c.Set(wire.IdempotencyReplayedHeader, "true")
	}
	return c.Status(status).JSON(v)
}

// decodeBody decodes a JSON request body strictly (apierr.DecodeJSON):
// unknown fields are refused, as everywhere in the API.
func decodeBody(c *fiber.Ctx, out any) error {
	return apierr.DecodeJSON(c.Request().Body(), out, false)
}

package gateway

import (
	"runtime/debug"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/jobbie/jobbie/gateway/admission"
	"github.com/jobbie/jobbie/internal/apierr"
)

// readyz fails while the gateway cannot serve: before it has keys and
// revocations, while any listener of its group cannot accept connections
// (naming it and the error), and while its revocation list is stale.
func (s *Server) readyz(c *fiber.Ctx) error {
	switch {
	case !s.gate.KeysLoaded():
		return apierr.Retry(apierr.Unavailable, 1, "not ready: signing keys not loaded from control yet")
	case !s.gate.RevocationsLoaded():
		return apierr.Retry(apierr.Unavailable, 1, "not ready: revocation list not loaded from control yet")
	}
	if f := s.listeners.Failing(); f != nil {
		return apierr.Retry(apierr.Unavailable, 1, "not ready: %v", f)
	}
	if age, stale := s.gate.RevocationAge(s.cfg.Clock.Now()); stale {
		return apierr.Retry(apierr.Unavailable, admission.StaleRetryAfter, "not ready: the revocation list is %s old, over its bound of %s (control unreachable)",
			age.Truncate(time.Second), s.cfg.RevocationMaxAge)
	}
	return c.JSON(fiber.Map{"status": "ready"})
}

// recoverPanic turns a handler panic into a logged 500 instead of a dead
// process; the panic value stays in the log.
func (s *Server) recoverPanic(c *fiber.Ctx) (err error) {
	defer func() {
		if v := recover(); v != nil {
			s.log.Error("gateway: panic", "panic", v, "path", c.Path(), "stack", string(debug.Stack()))
			err = apierr.New(apierr.Internal, "internal error")
		}
	}()
	return c.Next()
}

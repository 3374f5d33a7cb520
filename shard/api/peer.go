package api

import (
	"github.com/gofiber/fiber/v2"

	"github.com/jobbie/jobbie/internal/conncheck"
	"github.com/jobbie/jobbie/shard/service"
)

// fasthttp tells a handler nothing when its client hangs up, and a
// long-poll does not read the connection while it waits: conncheck looks
// at the socket instead (under TLS too).

// clientGone returns the service's Gone for the connection of c.
func clientGone(c *fiber.Ctx) service.Gone {
	conn := c.Context().Conn()
	return func() bool { return conncheck.Gone(conn) }
}

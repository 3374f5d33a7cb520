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

// goneOrDrained is clientGone, or the worker was drained while its fetch
// waited: a wake-up ends its wait, and a job leased to it as it was
// drained is given back, so a drained worker takes no more.
func (s *Server) goneOrDrained(c *fiber.Ctx, workerID string) service.Gone {
	gone, nsName := clientGone(c), ns(c)
	return func() bool { return gone() || s.workers.Draining(nsName, workerID) }
}

package api

import (
	"github.com/gofiber/fiber/v2"

	"github.com/jobbie/jobbie/internal/idemkey"
	"github.com/jobbie/jobbie/shard/service"
	"github.com/jobbie/jobbie/wire"
)

// idempotency reads an Idempotency-Key: on the creating routes that take
// one (wire.IdempotentRoutes) it hands the key and the request's hash to
// the service call, and answers a replay 200 with Idempotency-Replayed;
// any other route refuses the header (idemkey.Read). A follower has
// forwarded the request to its leader before this runs.
func idempotency(c *fiber.Ctx) error {
	takes := c.Method() == fiber.MethodPost && wire.IdempotentRoutes[c.Path()]
	k, err := idemkey.Read(c, takes, "only the creating POSTs do")
	if err != nil || k == "" {
		if err != nil {
			return err
		}
		return c.Next()
	}
	idem := &service.Idempotency{Key: k, Hash: idemkey.Hash(c)}
	c.SetUserContext(service.WithIdempotency(c.UserContext(), idem))
	if err := c.Next(); err != nil {
		return err
	}
	if idem.Replayed() {
		idemkey.Replayed(c)
	}
	return nil
}

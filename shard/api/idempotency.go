package api

import (
	"crypto/sha256"

	"github.com/gofiber/fiber/v2"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/shard/service"
	"github.com/jobbie/jobbie/wire"
)

// idempotency reads an Idempotency-Key (docs/api/README.md,
// "Idempotency"): on the creating routes that take one
// (wire.IdempotentRoutes) it hands the key and the request's hash to the
// service call, and answers a replay 200 with Idempotency-Replayed; any
// other route refuses the header rather than ignore it. A follower has
// forwarded the request to its leader before this runs, so the hash is
// the leader's reading of the same bytes.
func idempotency(c *fiber.Ctx) error {
	vals := c.Request().Header.PeekAll(wire.IdempotencyKeyHeader)
	if len(vals) == 0 {
		return c.Next()
	}
	if c.Method() != fiber.MethodPost || !wire.IdempotentRoutes[c.Path()] {
		return apierr.Field(wire.IdempotencyKeyHeader, "%s %s does not take an %s; only the creating POSTs do (docs/api/README.md, \"Idempotency\")",
			c.Method(), c.Path(), wire.IdempotencyKeyHeader)
	}
	if len(vals) > 1 {
		return apierr.Field(wire.IdempotencyKeyHeader, "send one %s; got %d", wire.IdempotencyKeyHeader, len(vals))
	}
	k := string(vals[0]) // a copy: fiber's buffers are reused
	if err := wire.CheckIdempotencyKey(k); err != nil {
		return apierr.Field(wire.IdempotencyKeyHeader, "%v", err)
	}
	idem := &service.Idempotency{Key: k, Hash: requestHash(c)}
	c.SetUserContext(service.WithIdempotency(c.UserContext(), idem))
	if err := c.Next(); err != nil {
		return err
	}
	if idem.Replayed() {
		c.Status(fiber.StatusOK) // nothing was created by this request
		c.Set(wire.IdempotencyReplayedHeader, "true")
	}
	return nil
}

// requestHash is what a key's repeat must match: the method, the path and
// the body (the namespace is the record's own prefix).
func requestHash(c *fiber.Ctx) []byte {
	h := sha256.New()
	h.Write([]byte(c.Method()))
	h.Write([]byte{0})
	h.Write([]byte(c.Path()))
	h.Write([]byte{0})
	h.Write(c.Body())
	return h.Sum(nil)
}

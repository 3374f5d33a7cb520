// Package idemkey reads a request's Idempotency-Key header: the one place
// for what the gateway, a shard and control refuse of it and for the hash
// a key's repeat must match (docs/api/README.md, "Idempotency"). Each
// caller decides which of its routes take a key and keeps its own record.
package idemkey

import (
	"crypto/sha256"

	"github.com/gofiber/fiber/v2"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/wire"
)

// Read returns the request's key, "" when it sends none. A key sent to a
// route that takes none (takes false) is refused rather than ignored, as
// are a second key and a malformed one; which says in the refusal what
// does take one. Every refusal is a 400 naming the header.
func Read(c *fiber.Ctx, takes bool, which string) (string, error) {
	vals := c.Request().Header.PeekAll(wire.IdempotencyKeyHeader)
	switch {
	case len(vals) == 0:
		return "", nil
	case !takes:
		return "", apierr.Field(wire.IdempotencyKeyHeader, "%s %s does not take an %s; %s (docs/api/README.md, \"Idempotency\")",
			c.Method(), c.Path(), wire.IdempotencyKeyHeader, which)
	case len(vals) > 1:
		return "", apierr.Field(wire.IdempotencyKeyHeader, "send one %s; got %d", wire.IdempotencyKeyHeader, len(vals))
	}
	k := string(vals[0]) // a copy: fasthttp's buffers are reused
	if err := wire.CheckIdempotencyKey(k); err != nil {
		return "", apierr.Field(wire.IdempotencyKeyHeader, "%v", err)
	}
	return k, nil
}

// Hash is what a key's repeat must match: the method, the path and the
// body (the record's own scope, a namespace or a tenant, is its prefix).
// A follower forwards a request as it came, so its leader hashes the same
// bytes.
func Hash(c *fiber.Ctx) []byte {
	h := sha256.New()
	h.Write([]byte(c.Method()))
	h.Write([]byte{0})
	h.Write([]byte(c.Path()))
	h.Write([]byte{0})
	h.Write(c.Body())
	return h.Sum(nil)
}

// Replayed marks the answer of a create that a key's repeat did not
// make again: 200, not 201, and the Idempotency-Replayed header.
func Replayed(c *fiber.Ctx) {
	c.Status(fiber.StatusOK)
	c.Set(wire.IdempotencyReplayedHeader, "true")
}

package gateway

import (
	"crypto/sha256"
	"encoding/hex"

	"github.com/gofiber/fiber/v2"

	apidoc "github.com/jobbie/jobbie/docs/api"
	"github.com/jobbie/jobbie/gateway/admitted"
)

// openAPIETag names the embedded document's version, so a client (or a
// cache) asks again with If-None-Match and gets a 304.
var openAPIETag = func() string {
	sum := sha256.Sum256(apidoc.OpenAPI)
	return `"` + hex.EncodeToString(sum[:8]) + `"`
}()

// openAPI serves docs/api/openapi.json, the public API's description:
// public (it says nothing of any tenant) and cacheable for an hour.
var openAPI serve = func(_ *Server, c *fiber.Ctx, _ *admitted.Request) error {
	c.Set(fiber.HeaderCacheControl, "public, max-age=3600")
	c.Set(fiber.HeaderETag, openAPIETag)
	if c.Get(fiber.HeaderIfNoneMatch) == openAPIETag {
		return c.SendStatus(fiber.StatusNotModified)
	}
	c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
	return c.Send(apidoc.OpenAPI)
}

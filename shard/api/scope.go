package api

import (
	"github.com/gofiber/fiber/v2"

	"github.com/jobbie/jobbie/shard/service"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// scope is the queues a request may act on (wire.QueueScopeHeader, set by
// the gateway for a key of a custom role). Without the header, every
// queue: one header lookup, nothing parsed, and the service reads nothing
// more for it. service/scope.go enforces it. Sent more than once, it is
// no queue: which one was meant cannot be known, and taking the first
// could widen a scope.
func scope(c *fiber.Ctx) tenancy.QueueScope {
	h := &c.Request().Header
	v := h.Peek(wire.QueueScopeHeader)
	if v == nil {
		return tenancy.AllQueues()
	}
	if len(h.PeekAll(wire.QueueScopeHeader)) > 1 {
		return tenancy.NewQueueScope()
	}
	return tenancy.ParseQueueScope(string(v)) // present but empty: no queue
}

// queueInScope guards every /queues/{name} route: a queue outside the
// scope is 403 before its handler runs, whatever the route does.
func queueInScope(c *fiber.Ctx) error {
	if err := service.AllowQueue(scope(c), "queue", c.Params("name")); err != nil {
		return err
	}
	return c.Next()
}

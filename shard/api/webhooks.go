package api

import (
	"context"

	"github.com/gofiber/fiber/v2"

	"github.com/jobbie/jobbie/shard/service"
	"github.com/jobbie/jobbie/wire"
)

// Webhooks is the leader's webhook delivery (shard/webhooks): test
// events and redeliveries.
type Webhooks interface {
	Test(ctx context.Context, ns, id string) (*wire.WebhookDelivery, error)
	Redeliver(ctx context.Context, ns, id, eventID string) (*wire.WebhookDelivery, error)
}

// webhookRoutes mounts the namespace's lifecycle webhook endpoints. They
// see events of every queue, so each needs every queue (a key limited to
// some queues is 403). Tests and redeliveries are the leader's; the
// delivery log is replicated state any node answers.
func (s *Server) webhookRoutes(api fiber.Router) {
	g := api.Group("/webhooks", func(c *fiber.Ctx) error {
		if err := service.WholeNamespace(scope(c)); err != nil {
			return err
		}
		return c.Next()
	})
	g.Get("", func(c *fiber.Ctx) error {
		l, err := s.svc.Webhooks(ns(c))
		return reply(c, l, err)
	})
	g.Post("", func(c *fiber.Ctx) error {
		var r wire.WebhookRequest
		if err := decode(c, &r); err != nil {
			return err
		}
		w, err := s.svc.CreateWebhook(c.UserContext(), ns(c), &r)
		if err != nil {
			return err
		}
		return c.Status(fiber.StatusCreated).JSON(w)
	})
	g.Get("/:id", func(c *fiber.Ctx) error {
		w, err := s.svc.Webhook(ns(c), c.Params("id"))
		return reply(c, w, err)
	})
	g.Put("/:id", func(c *fiber.Ctx) error {
		var r wire.WebhookRequest
		if err := decode(c, &r); err != nil {
			return err
		}
		w, err := s.svc.UpdateWebhook(c.UserContext(), ns(c), c.Params("id"), &r)
		return reply(c, w, err)
	})
	g.Delete("/:id", func(c *fiber.Ctx) error {
		if err := s.svc.DeleteWebhook(c.UserContext(), ns(c), c.Params("id")); err != nil {
			return err
		}
		return c.SendStatus(fiber.StatusNoContent)
	})
	g.Post("/:id/rotate-secret", func(c *fiber.Ctx) error {
		w, err := s.svc.RotateWebhookSecret(c.UserContext(), ns(c), c.Params("id"))
		return reply(c, w, err)
	})
	g.Get("/:id/deliveries", func(c *fiber.Ctx) error {
		l, err := s.svc.WebhookDeliveries(ns(c), c.Params("id"))
		return reply(c, l, err)
	})
	g.Post("/:id/test", func(c *fiber.Ctx) error {
		if s.hooks == nil {
			return fiber.ErrNotFound
		}
		a, err := s.hooks.Test(c.UserContext(), ns(c), c.Params("id"))
		return reply(c, a, err)
	})
	g.Post("/:id/redeliver", func(c *fiber.Ctx) error {
		if s.hooks == nil {
			return fiber.ErrNotFound
		}
		var r wire.WebhookRedeliverRequest
		if err := decode(c, &r); err != nil {
			return err
		}
		a, err := s.hooks.Redeliver(c.UserContext(), ns(c), c.Params("id"), r.EventID)
		return reply(c, a, err)
	})
}

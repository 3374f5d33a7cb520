package api

import (
	"github.com/gofiber/fiber/v2"

	"github.com/jobbie/jobbie/shard/service"
	"github.com/jobbie/jobbie/wire"
)

// alertRoutes mounts the namespace's alert rules. A rule may watch every
// queue, so each route needs every queue (a key limited to some queues
// is 403), as webhooks do. Reads are the leader's (servedLocally): the
// values of the last evaluation live in its memory.
func (s *Server) alertRoutes(api fiber.Router) {
	g := api.Group("/alerts", func(c *fiber.Ctx) error {
		if err := service.WholeNamespace(scope(c)); err != nil {
			return err
		}
		return c.Next()
	})
	g.Get("", func(c *fiber.Ctx) error {
		l, err := s.svc.Alerts(ns(c))
		return reply(c, l, err)
	})
	g.Post("", func(c *fiber.Ctx) error {
		var r wire.AlertRuleRequest
		if err := decode(c, &r); err != nil {
			return err
		}
		a, err := s.svc.CreateAlert(c.UserContext(), ns(c), &r)
		if err != nil {
			return err
		}
		return c.Status(fiber.StatusCreated).JSON(a)
	})
	g.Get("/:name", func(c *fiber.Ctx) error {
		a, err := s.svc.Alert(ns(c), c.Params("name"))
		return reply(c, a, err)
	})
	g.Put("/:name", func(c *fiber.Ctx) error {
		var r wire.AlertRuleRequest
		if err := decode(c, &r); err != nil {
			return err
		}
		a, err := s.svc.UpdateAlert(c.UserContext(), ns(c), c.Params("name"), &r)
		return reply(c, a, err)
	})
	g.Delete("/:name", func(c *fiber.Ctx) error {
		if err := s.svc.DeleteAlert(c.UserContext(), ns(c), c.Params("name")); err != nil {
			return err
		}
		return c.SendStatus(fiber.StatusNoContent)
	})
}

package api

import (
	"github.com/gofiber/fiber/v2"

	"github.com/jobbie/jobbie/shard/service"
	"github.com/jobbie/jobbie/wire"
)

// namespaceRoutes mounts what the gateway asks of a namespace as a whole
// on this shard: GET /api/v1/namespace counts what it holds
// (wire.NamespaceUsage), PUT /api/v1/namespace changes its settings
// (wire.NamespaceSettings: its retention, its egress allow-list; answers
// the usage), DELETE
// /api/v1/namespace removes all of it, settings included (204). All need
// every queue: a limited scope is 403.
func (s *Server) namespaceRoutes(api fiber.Router) {
	whole := func(c *fiber.Ctx) error {
		if err := service.WholeNamespace(scope(c)); err != nil {
			return err
		}
		return c.Next()
	}
	api.Get("/namespace", whole, s.namespaceUsage)
	api.Put("/namespace", whole, s.configureNamespace)
	api.Delete("/namespace", whole, s.deleteNamespace)
}

func (s *Server) configureNamespace(c *fiber.Ctx) error {
	var req wire.NamespaceSettings
	if err := decode(c, &req); err != nil {
		return err
	}
	u, err := s.svc.ConfigureNamespace(c.UserContext(), ns(c), &req)
	return reply(c, u, err)
}

func (s *Server) namespaceUsage(c *fiber.Ctx) error {
	u, err := s.svc.NamespaceUsage(ns(c))
	return reply(c, u, err)
}

func (s *Server) deleteNamespace(c *fiber.Ctx) error {
	if err := s.svc.DeleteNamespace(c.UserContext(), ns(c)); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}

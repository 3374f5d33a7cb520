package api

import (
	"github.com/gofiber/fiber/v2"

	"github.com/jobbie/jobbie/shard/service"
	"github.com/jobbie/jobbie/wire"
)

// encryptionRoutes mounts GET and PUT /api/v1/encryption: the
// namespace's encryption at rest (wire.Encryption; a PUT takes
// wire.EncryptionRequest, whose tenant key no answer or log holds). Both
// need every queue: a limited scope is 403.
func (s *Server) encryptionRoutes(api fiber.Router) {
	whole := func(c *fiber.Ctx) error {
		if err := service.WholeNamespace(scope(c)); err != nil {
			return err
		}
		return c.Next()
	}
	api.Get("/encryption", whole, func(c *fiber.Ctx) error {
		v, err := s.svc.Encryption(ns(c))
		return reply(c, v, err)
	})
	api.Put("/encryption", whole, func(c *fiber.Ctx) error {
		var req wire.EncryptionRequest
		if err := decode(c, &req); err != nil {
			return err
		}
		v, err := s.svc.SetEncryption(c.UserContext(), ns(c), &req)
		return reply(c, v, err)
	})
}

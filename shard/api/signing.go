package api

import (
	"github.com/gofiber/fiber/v2"

	"github.com/jobbie/jobbie/shard/service"
)

// signingRoutes mounts the namespace's webhook signing keys: GET
// /api/v1/signing-keys (public keys only; the first is made on first
// use, so the leader answers) and POST /api/v1/signing-keys/rotate, which
// needs every queue (a key limited to some queues is 403).
func (s *Server) signingRoutes(api fiber.Router) {
	api.Get("/signing-keys", func(c *fiber.Ctx) error {
		l, err := s.svc.SigningKeys(c.UserContext(), ns(c))
		return reply(c, l, err)
	})
	api.Post("/signing-keys/rotate", func(c *fiber.Ctx) error {
		if err := service.WholeNamespace(scope(c)); err != nil {
			return err
		}
		l, err := s.svc.RotateSigningKeys(c.UserContext(), ns(c))
		return reply(c, l, err)
	})
}

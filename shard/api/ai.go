package api

import (
	"github.com/gofiber/fiber/v2"
)

// aiRoutes mounts the AI usage endpoints (service/ai.go).
func (s *Server) aiRoutes(api fiber.Router) {
	api.Get("/ai/usage", func(c *fiber.Ctx) error {
		v, err := s.svc.AIUsage(ns(c), scope(c), c.Query("from"), c.Query("to"), c.Query("group_by"))
		return reply(c, v, err)
	})
}

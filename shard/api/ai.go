package api

import (
	"github.com/gofiber/fiber/v2"

	"github.com/jobbie/jobbie/wire"
)

// aiRoutes mounts the AI usage endpoints (service/ai.go) and budgets.
func (s *Server) aiRoutes(api fiber.Router) {
	s.budgetRoutes(api)
	api.Get("/ai/usage", func(c *fiber.Ctx) error {
		v, err := s.svc.AIUsage(ns(c), scope(c), c.Query("from"), c.Query("to"), c.Query("group_by"), c.Query("step"))
		return reply(c, v, err)
	})
}

// budgetRoutes mounts the AI budgets and the approval of the jobs they
// hold (service/budgets.go).
func (s *Server) budgetRoutes(api fiber.Router) {
	g := api.Group("/ai/budgets")
	g.Get("", func(c *fiber.Ctx) error {
		l, err := s.svc.ListBudgets(ns(c), scope(c))
		return reply(c, l, err)
	})
	g.Post("", func(c *fiber.Ctx) error {
		var r wire.BudgetSpec
		if err := decode(c, &r); err != nil {
			return err
		}
		b, err := s.svc.PutBudget(c.UserContext(), ns(c), scope(c), "", true, &r)
		if err != nil {
			return err
		}
		return c.Status(fiber.StatusCreated).JSON(b)
	})
	g.Get("/:name", func(c *fiber.Ctx) error {
		b, err := s.svc.GetBudget(ns(c), scope(c), c.Params("name"))
		return reply(c, b, err)
	})
	g.Put("/:name", func(c *fiber.Ctx) error {
		var r wire.BudgetSpec
		if err := decode(c, &r); err != nil {
			return err
		}
		b, err := s.svc.PutBudget(c.UserContext(), ns(c), scope(c), c.Params("name"), false, &r)
		return reply(c, b, err)
	})
	g.Delete("/:name", func(c *fiber.Ctx) error {
		if err := s.svc.DeleteBudget(c.UserContext(), ns(c), scope(c), c.Params("name")); err != nil {
			return err
		}
		return c.SendStatus(fiber.StatusNoContent)
	})
	api.Post("/jobs/:id/approve", func(c *fiber.Ctx) error {
		r, err := s.svc.ApproveJob(c.UserContext(), ns(c), scope(c), c.Params("id"))
		return reply(c, r, err)
	})
	api.Post("/jobs/:id/reject", func(c *fiber.Ctx) error {
		r, err := s.svc.RejectJob(c.UserContext(), ns(c), scope(c), c.Params("id"))
		return reply(c, r, err)
	})
}

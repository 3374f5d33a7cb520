package control

import (
	"github.com/gofiber/fiber/v2"
)

// Operator endpoints: /control/v1, behind operatorOnly.

func (s *Server) postTenant(c *fiber.Ctx) error {
	var req struct {
		Name string `json:"name"`
	}
	if err := decode(c, &req); err != nil {
		return err
	}
	res, err := s.CreateTenant(c.UserContext(), req.Name)
	if err != nil {
		return err
	}
	return c.Status(fiber.StatusCreated).JSON(res)
}

func (s *Server) getTenants(c *fiber.Ctx) error {
	list, err := s.Tenants(c.UserContext())
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"tenants": list})
}

func (s *Server) getShards(c *fiber.Ctx) error {
	list, err := s.Shards(c.UserContext())
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"shards": list})
}

package api

import (
	"github.com/gofiber/fiber/v2"

	"github.com/jobbie/jobbie/control/billing"
	"github.com/jobbie/jobbie/control/state"
	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/wire"
)

// Plans on the operator API (/control/v1/plans, a tenant's plan), and a
// tenant's plan for gateways (/internal/v1/tenants/{tid}/plan).

func (s *Server) getPlans(c *fiber.Ctx) error {
	list, err := s.Plans(c.UserContext())
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"plans": list})
}

func (s *Server) getPlan(c *fiber.Ctx) error {
	p, err := s.Plan(c.UserContext(), c.Params("name"))
	if err != nil {
		return err
	}
	return c.JSON(p)
}

func (s *Server) postPlan(c *fiber.Ctx) error {
	var p wire.Plan
	if err := decode(c, &p); err != nil {
		return err
	}
	out, err := s.PutPlan(c.UserContext(), p, true)
	if err != nil {
		return err
	}
	return c.Status(fiber.StatusCreated).JSON(out)
}

// putPlan replaces a plan; the body's name, when given, must be the path's.
func (s *Server) putPlan(c *fiber.Ctx) error {
	var p wire.Plan
	if err := decode(c, &p); err != nil {
		return err
	}
	name := c.Params("name")
	if p.Name != "" && p.Name != name {
		return apierr.Field("name", "name %q is not the plan of the path, %q", p.Name, name)
	}
	p.Name = name
	if !billing.ValidPlanName(name) {
		return state.PlanNotFound(name)
	}
	out, err := s.PutPlan(c.UserContext(), p, false)
	if err != nil {
		return err
	}
	return c.JSON(out)
}

func (s *Server) getTenantPlan(c *fiber.Ctx) error {
	tp, err := s.TenantPlan(c.UserContext(), c.Params("tid"))
	if err != nil {
		return err
	}
	return c.JSON(tp)
}

func (s *Server) putTenantPlan(c *fiber.Ctx) error {
	var req wire.SetPlanRequest
	if err := decode(c, &req); err != nil {
		return err
	}
	tp, err := s.SetTenantPlan(c.UserContext(), c.Params("tid"), req.Plan)
	if err != nil {
		return err
	}
	return c.JSON(tp)
}

package api

import (
	"github.com/gofiber/fiber/v2"

	"github.com/jobbie/jobbie/control/service"
	"github.com/jobbie/jobbie/control/state"
	"github.com/jobbie/jobbie/wire"
)

// The gateways' internal role endpoints. Changes answer the tenant's
// roles version after them (wire.RoleChanged, wire.RolesVersion), so the
// gateway that made one drops its copy of the tenant's roles at once.

func (s *Server) getRoles(c *fiber.Ctx) error {
	roles, version, err := s.Roles(c.UserContext(), c.Params("tid"))
	if err != nil {
		return err
	}
	return c.JSON(wire.TenantRoles{Roles: state.Each(roles, state.RoleView), Version: version})
}

func (s *Server) getRole(c *fiber.Ctx) error {
	role, err := s.Role(c.UserContext(), c.Params("tid"), c.Params("name"))
	if err != nil {
		return err
	}
	return c.JSON(state.RoleView(role))
}

func (s *Server) postRole(c *fiber.Ctx) error {
	var req service.RoleRequest
	if err := decode(c, &req); err != nil {
		return err
	}
	role, version, err := s.CreateRole(c.UserContext(), c.Params("tid"), req)
	if err != nil {
		return err
	}
	return c.Status(fiber.StatusCreated).JSON(wire.RoleChanged{Role: state.RoleView(role), RolesVersion: version})
}

func (s *Server) putRole(c *fiber.Ctx) error {
	var req service.RoleRequest
	if err := decode(c, &req); err != nil {
		return err
	}
	role, version, err := s.UpdateRole(c.UserContext(), c.Params("tid"), c.Params("name"), req)
	if err != nil {
		return err
	}
	return c.JSON(wire.RoleChanged{Role: state.RoleView(role), RolesVersion: version})
}

func (s *Server) deleteRole(c *fiber.Ctx) error {
	version, err := s.DeleteRole(c.UserContext(), c.Params("tid"), c.Params("name"))
	if err != nil {
		return err
	}
	return c.JSON(wire.RolesVersion{Version: version})
}

package api

import (
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/jobbie/jobbie/control/service"
	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/pki"
	"github.com/jobbie/jobbie/wire"
)

// clusterRoutes serves the node's status and the group's membership to
// other control nodes (their certificates) and operators.
func (s *Server) clusterRoutes(app *fiber.App) {
	member := pki.Require(pki.Roles(pki.RoleControl, pki.RoleOperator), nil)
	app.Get("/internal/v1/status", member, func(c *fiber.Ctx) error {
		st, err := s.Status()
		if err != nil {
			return err
		}
		return c.JSON(st)
	})
	app.Get("/internal/v1/members", member, s.getMembers)
	app.Post("/internal/v1/members", member, s.gate(nil, false), s.postMember)
	app.Delete("/internal/v1/members/:id", member, s.gate(nil, false), s.deleteMember)
}

func (s *Server) getMembers(c *fiber.Ctx) error {
	out, err := s.Members()
	if err != nil {
		return err
	}
	return c.JSON(out)
}

func (s *Server) postMember(c *fiber.Ctx) error {
	var r wire.AddMemberRequest
	if err := decode(c, &r); err != nil {
		return err
	}
	switch {
	case !service.ShardIDRE.MatchString(r.NodeID):
		return apierr.Field("node_id", "node_id is required: 1-63 letters, digits, '.', '_' or '-'")
	case !hostPort(r.RaftAddr):
		return apierr.Field("raft_addr", "raft_addr must be host:port with a port other than 0")
	case r.HTTPAddr != "" && !hostPort(r.HTTPAddr):
		return apierr.Field("http_addr", "http_addr must be host:port with a port other than 0")
	}
	if err := s.AddMember(c.UserContext(), r); err != nil {
		return err
	}
	return s.getMembers(c)
}

func (s *Server) deleteMember(c *fiber.Ctx) error {
	if err := s.RemoveMember(c.UserContext(), c.Params("id")); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}

func hostPort(a string) bool {
	i := strings.LastIndexByte(a, ':')
	return i > 0 && a[i+1:] != "" && a[i+1:] != "0"
}

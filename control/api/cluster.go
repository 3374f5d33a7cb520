package api

import (
	"context"

	"github.com/gofiber/fiber/v2"

	"github.com/jobbie/jobbie/control/service"
	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/pki"
	"github.com/jobbie/jobbie/internal/replica/edge"
	"github.com/jobbie/jobbie/wire"
)

// clusterRoutes serves the node's status and the group's membership (the
// edge's, internal/replica/edge) to other control nodes (their
// certificates) and operators.
func (s *Server) clusterRoutes(app *fiber.App) {
	s.group.Routes(app, pki.Require(pki.Roles(pki.RoleControl, pki.RoleOperator), nil))
}

// Group is this node's edge of the control group: forwarding, status,
// members, joining.
func (s *Server) Group() *edge.Group { return s.group }

// checkAdd checks a request to add a member.
func checkAdd(r wire.AddMemberRequest) error {
	switch {
	case !service.ShardIDRE.MatchString(r.NodeID):
		return apierr.Field("node_id", "node_id is required: 1-63 letters, digits, '.', '_' or '-'")
	case !edge.HostPort(r.RaftAddr):
		return apierr.Field("raft_addr", "raft_addr must be host:port with a port other than 0")
	case r.HTTPAddr != "" && !edge.HostPort(r.HTTPAddr):
		return apierr.Field("http_addr", "http_addr must be host:port with a port other than 0")
	}
	return nil
}

// recordMemberHTTP records where a member added with an HTTP address
// serves, so followers find it when it leads, without gossip.
func (s *Server) recordMemberHTTP(ctx context.Context, r wire.AddMemberRequest) error {
	if r.HTTPAddr == "" {
		return nil
	}
	return s.RecordMemberHTTP(ctx, r.NodeID, r.HTTPAddr)
}

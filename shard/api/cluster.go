package api

import (
	"fmt"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/pki"
	"github.com/jobbie/jobbie/internal/replica/edge"
	"github.com/jobbie/jobbie/wire"
)

// clusterRoutes serves the node's status and the group's membership under
// /internal/v1 (the edge's, internal/replica/edge), and snapshots, for
// this shard's members and operators (docs/internal-api.md). The check is
// per route, not on a group: a group's handlers run for every path under
// its prefix, /internal/v1/usage too, which admits others.
func (s *Server) clusterRoutes() {
	member := pki.Require(s.memberCallers(), nil)
	s.group.Routes(s.app, member)
	s.app.Post("/internal/v1/snapshot", member, s.takeSnapshot)
}

// Status is this node's view of its group.
func (s *Server) Status() edge.NodeStatus {
	st, _ := s.group.Status() // the node is there for the server's life
	return st
}

// Members lists the group's members as this node knows them, with the HTTP
// address each advertises in gossip.
func (s *Server) Members() ([]wire.Member, error) {
	list, err := s.group.Members()
	return list.Members, err
}

// checkAdd checks a request to add a member. A shard's members advertise
// their HTTP addresses in gossip: an add names none.
func checkAdd(r wire.AddMemberRequest) error {
	switch {
	case r.NodeID == "" || len(r.NodeID) > 64 || strings.ContainsAny(r.NodeID, " /\t\n"):
		return apierr.Field("node_id", "node_id is required: up to 64 characters, no spaces or slashes")
	case !edge.HostPort(r.RaftAddr):
		return apierr.Field("raft_addr", "raft_addr must be host:port")
	case r.HTTPAddr != "":
		return apierr.Field("http_addr", "a shard's members advertise their HTTP addresses in gossip: leave http_addr out")
	}
	return nil
}

// takeSnapshot snapshots this node now (and so compacts its log): an
// operator's tool before adding a node, and how tests force catch-up by
// snapshot. It is not forwarded: every node snapshots on its own.
func (s *Server) takeSnapshot(c *fiber.Ctx) error {
	if err := s.node.Snapshot(); err != nil {
		return fmt.Errorf("shard: snapshot: %w", err)
	}
	return c.JSON(fiber.Map{"snapshot_index": s.node.Status().AppliedIndex})
}

package api

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/pki"
	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/wire"
)

// clusterRoutes serves the node's status and the group's membership under
// /internal/v1, for this shard's members and operators (docs/internal-api.md).
// Membership changes go to the leader through forwardToLeader, like writes.
// The check is per route, not on the group: a group's handlers run for
// every path under its prefix, /internal/v1/usage too, which admits others.
func (s *Server) clusterRoutes() {
	member := pki.Require(s.memberCallers(), nil)
	in := s.app.Group("/internal/v1")
	in.Get("/status", member, func(c *fiber.Ctx) error { return c.JSON(s.Status()) })
	in.Get("/members", member, s.listMembers)
	in.Post("/members", member, s.forwardToLeader, s.addMember)
	in.Delete("/members/:id", member, s.forwardToLeader, s.removeMember)
	in.Post("/snapshot", member, s.takeSnapshot)
}

// NodeStatus is GET /internal/v1/status: this node's view of its group.
type NodeStatus struct {
	replica.Status
	ShardID    string `json:"shard_id"`
	HTTPAddr   string `json:"http_addr"`
	RaftAddr   string `json:"raft_addr"`
	LeaderHTTP string `json:"leader_http,omitempty"`
	Version    string `json:"version,omitempty"`
}

// Status is this node's view of its group.
func (s *Server) Status() NodeStatus {
	out := NodeStatus{Status: s.node.Status(), ShardID: s.cfg.ShardID, HTTPAddr: s.AdvertisedHTTP(),
		RaftAddr: s.node.RaftAddr(), Version: s.cfg.Version}
	out.LeaderHTTP, _ = s.LeaderHTTP()
	return out
}

func (s *Server) listMembers(c *fiber.Ctx) error {
	ms, err := s.Members()
	if err != nil {
		return err
	}
	return c.JSON(wire.MemberList{ShardID: s.cfg.ShardID, LeaderID: s.node.LeaderID(), Members: ms})
}

// Members lists the group's members as this node knows them, with the HTTP
// address each advertises in gossip.
func (s *Server) Members() ([]wire.Member, error) {
	ms, err := s.node.Members()
	if err != nil {
		return nil, err
	}
	out := make([]wire.Member, 0, len(ms))
	for _, m := range ms {
		v := wire.Member{NodeID: m.ID, RaftAddr: m.Addr, Voter: m.Voter, Leader: m.Leader}
		if m.ID == s.cfg.NodeID {
			v.HTTPAddr = s.AdvertisedHTTP()
		} else {
			v.HTTPAddr, _ = s.httpOf(m.ID)
		}
		out = append(out, v)
	}
	return out, nil
}

// AddMemberRequest is the body of POST /internal/v1/members.
type AddMemberRequest struct {
	NodeID   string `json:"node_id"`
	RaftAddr string `json:"raft_addr"`
}

func (s *Server) addMember(c *fiber.Ctx) error {
	var r AddMemberRequest
	if err := decode(c, &r); err != nil {
		return err
	}
	switch {
	case r.NodeID == "" || len(r.NodeID) > 64 || strings.ContainsAny(r.NodeID, " /\t\n"):
		return apierr.Field("node_id", "node_id is required: up to 64 characters, no spaces or slashes")
	case !validHostPort(r.RaftAddr):
		return apierr.Field("raft_addr", "raft_addr must be host:port")
	}
	ctx, cancel := context.WithTimeout(c.UserContext(), 10*time.Second)
	defer cancel()
	if err := s.membershipError(s.node.AddVoter(ctx, r.NodeID, r.RaftAddr)); err != nil {
		return err
	}
	return s.listMembers(c)
}

func (s *Server) removeMember(c *fiber.Ctx) error {
	ctx, cancel := context.WithTimeout(c.UserContext(), 10*time.Second)
	defer cancel()
	if err := s.membershipError(s.node.RemoveServer(ctx, c.Params("id"))); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
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

func (s *Server) membershipError(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, replica.ErrUnknownMember):
		return apierr.New(apierr.NotFound, "%v", err)
	case errors.Is(err, replica.ErrMemberConflict):
		return apierr.New(apierr.Conflict, "%v", err)
	case errors.Is(err, context.DeadlineExceeded):
		return apierr.Retry(apierr.Unavailable, 1, "the membership change did not commit in time; check the members and retry")
	}
	return s.node.ProposeError(err)
}

func validHostPort(s string) bool {
	i := strings.LastIndexByte(s, ':')
	if i < 0 {
		return false
	}
	host, port := strings.Trim(s[:i], "[]"), s[i+1:]
	return host != "" && port != "" && port != "0"
}

package edge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/wire"
)

// membershipTimeout bounds a membership change.
const membershipTimeout = 10 * time.Second

// Routes serves the node's status and the group's membership (the shapes
// of wire/members.go) on r, each behind guard (who may call them):
//
//	GET    /internal/v1/status        this node's view of its group
//	GET    /internal/v1/members       the members, with where each serves HTTP
//	POST   /internal/v1/members       add a voter (the leader's: forwarded)
//	DELETE /internal/v1/members/{id}  remove a member (the leader's: forwarded)
func (g *Group) Routes(r fiber.Router, guard fiber.Handler) {
	r.Get("/internal/v1/status", guard, func(c *fiber.Ctx) error {
		st, err := g.Status()
		if err != nil {
			return err
		}
		return c.JSON(st)
	})
	r.Get("/internal/v1/members", guard, g.listMembers)
	r.Post("/internal/v1/members", guard, g.Forward(nil), g.addMember)
	r.Delete("/internal/v1/members/:id", guard, g.Forward(nil), g.removeMember)
}

// NodeStatus is GET /internal/v1/status: one member's view of its group,
// the same shape on control and on a shard (ShardID and Version are a
// shard's).
type NodeStatus struct {
	replica.Status
	ShardID    string `json:"shard_id,omitempty"`
	HTTPAddr   string `json:"http_addr"`
	RaftAddr   string `json:"raft_addr"`
	LeaderHTTP string `json:"leader_http,omitempty"`
	Version    string `json:"version,omitempty"`
}

// Status is this node's view of its group.
func (g *Group) Status() (NodeStatus, error) {
	node, release, err := g.cfg.Node()
	if err != nil {
		return NodeStatus{}, err
	}
	defer release()
	out := NodeStatus{Status: node.Status(), ShardID: g.cfg.ShardID, HTTPAddr: g.cfg.Advertised(), RaftAddr: node.RaftAddr(), Version: g.cfg.Version}
	out.LeaderHTTP, _ = g.LeaderHTTP(node)
	return out, nil
}

// Members lists the group's members as this node's Raft configuration
// has them (a follower may be a moment behind a change), with where each
// serves HTTP when known.
func (g *Group) Members() (wire.MemberList, error) {
	node, release, err := g.cfg.Node()
	if err != nil {
		return wire.MemberList{}, err
	}
	defer release()
	ms, err := node.Members()
	if err != nil {
		return wire.MemberList{}, err
	}
	out := wire.MemberList{ShardID: g.cfg.ShardID, LeaderID: node.LeaderID(), Members: make([]wire.Member, 0, len(ms))}
	for _, m := range ms {
		v := wire.Member{NodeID: m.ID, RaftAddr: m.Addr, Voter: m.Voter, Leader: m.Leader}
		v.HTTPAddr, _ = g.httpOf(node, m.ID)
		out.Members = append(out.Members, v)
	}
	return out, nil
}

func (g *Group) listMembers(c *fiber.Ctx) error {
	out, err := g.Members()
	if err != nil {
		return err
	}
	return c.JSON(out)
}

func (g *Group) addMember(c *fiber.Ctx) error {
	var r wire.AddMemberRequest
	if err := apierr.DecodeJSON(c.Body(), &r, false); err != nil {
		return err
	}
	if err := g.cfg.CheckAdd(r); err != nil {
		return err
	}
	ctx := c.UserContext()
	if err := g.membership(ctx, func(ctx context.Context, n *replica.Node) error { return n.AddVoter(ctx, r.NodeID, r.RaftAddr) }); err != nil {
		return err
	}
	if g.cfg.Added != nil {
		if err := g.cfg.Added(ctx, r); err != nil {
			return err
		}
	}
	return g.listMembers(c)
}

func (g *Group) removeMember(c *fiber.Ctx) error {
	id := c.Params("id")
	if err := g.membership(c.UserContext(), func(ctx context.Context, n *replica.Node) error { return n.RemoveServer(ctx, id) }); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}

// membership runs a membership change on the node and maps its errors:
// an unknown member 404, a conflict 409, a change that did not commit in
// time 503, and else the node's replication failure.
func (g *Group) membership(ctx context.Context, change func(context.Context, *replica.Node) error) error {
	node, release, err := g.cfg.Node()
	if err != nil {
		return err
	}
	defer release()
	ctx, cancel := context.WithTimeout(ctx, membershipTimeout)
	defer cancel()
	switch err := change(ctx, node); {
	case err == nil:
		return nil
	case errors.Is(err, replica.ErrUnknownMember):
		return apierr.New(apierr.NotFound, "%v", err)
	case errors.Is(err, replica.ErrMemberConflict):
		return apierr.New(apierr.Conflict, "%v", err)
	case errors.Is(err, context.DeadlineExceeded):
		return apierr.Retry(apierr.Unavailable, 1, "the membership change did not commit in time; check the members and retry")
	default:
		return node.ProposeError(err)
	}
}

// HostPort reports whether a is host:port with a host and a port other
// than 0, as a member's addresses must be.
func HostPort(a string) bool {
	i := strings.LastIndexByte(a, ':')
	if i < 0 {
		return false
	}
	host, port := strings.Trim(a[:i], "[]"), a[i+1:]
	return host != "" && port != "" && port != "0"
}

// PeerStatus asks the member at addr for its status (GET
// /internal/v1/status), waiting up to wait: the cluster's health asks
// every member for its indexes.
func (g *Group) PeerStatus(addr string, wait time.Duration) (NodeStatus, error) {
	var st NodeStatus
	node, err := g.cfg.Peers.Node(addr)
	if err != nil {
		return st, err
	}
	req := fasthttp.AcquireRequest()
	resp := fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.SetRequestURI("/internal/v1/status")
	if err := node.Do(req, resp, time.Now().Add(wait)); err != nil { // a network deadline: the wall clock
		return st, err
	}
	if resp.StatusCode() != fasthttp.StatusOK {
		return st, fmt.Errorf("%s: status %d", addr, resp.StatusCode())
	}
	if err := json.Unmarshal(resp.Body(), &st); err != nil {
		return st, fmt.Errorf("%s: status: %w", addr, err)
	}
	return st, nil
}

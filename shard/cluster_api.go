package shard

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/gossip"
	"github.com/jobbie/jobbie/internal/replica"
)

// clusterRoutes serves the node's status and the group's membership under
// /internal/v1, behind the cluster secret (docs/internal-api.md).
// Membership changes go to the leader through forwardToLeader, like writes.
func (s *Server) clusterRoutes() {
	in := s.app.Group("/internal/v1", s.authenticate)
	in.Get("/status", s.clusterStatus)
	in.Get("/members", s.listMembers)
	in.Post("/members", s.forwardToLeader, s.addMember)
	in.Delete("/members/:id", s.forwardToLeader, s.removeMember)
	in.Post("/snapshot", s.takeSnapshot)
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
	out := NodeStatus{Status: s.node.Status(), ShardID: s.cfg.ShardID, HTTPAddr: s.advertisedHTTP(),
		RaftAddr: s.node.RaftAddr(), Version: s.cfg.Version}
	out.LeaderHTTP, _ = s.leaderHTTP()
	return out
}

func (s *Server) clusterStatus(c *fiber.Ctx) error { return c.JSON(s.Status()) }

// MemberView is one member as GET /internal/v1/members shows it.
type MemberView struct {
	replica.Member
	HTTPAddr string `json:"http_addr,omitempty"` // from gossip, when the member is in the pool
}

func (s *Server) listMembers(c *fiber.Ctx) error {
	ms, err := s.Members()
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"shard_id": s.cfg.ShardID, "leader_id": s.node.LeaderID(), "members": ms})
}

// Members lists the group's members as this node knows them, with the HTTP
// address each advertises in gossip.
func (s *Server) Members() ([]MemberView, error) {
	ms, err := s.node.Members()
	if err != nil {
		return nil, err
	}
	out := make([]MemberView, 0, len(ms))
	for _, m := range ms {
		v := MemberView{Member: m}
		if m.ID == s.cfg.NodeID {
			v.HTTPAddr = s.advertisedHTTP()
		} else {
			v.HTTPAddr, _ = s.httpOf(m.ID)
		}
		out = append(out, v)
	}
	return out, nil
}

// HasState reports whether the node found Raft state when it opened; one
// without (and without Bootstrap) must JoinCluster.
func (s *Server) HasState() bool { return s.node.HasState() }

// Membership reports whether this node is in the latest configuration it
// knows, whether it knows one, and whether Raft stopped itself on
// applying its removal (replica.Node.Membership).
func (s *Server) Membership() (member, known, stopped bool) { return s.node.Membership() }

// Subscribe tells of leadership changes (replica.Node.Subscribe).
func (s *Server) Subscribe() (<-chan struct{}, func()) { return s.node.Subscribe() }

// AddMemberRequest is the body of POST /internal/v1/members.
type AddMemberRequest struct {
	NodeID   string `json:"node_id"`
	RaftAddr string `json:"raft_addr"`
}

func (s *Server) addMember(c *fiber.Ctx) error {
	var r AddMemberRequest
	if err := decodeBody(c.Body(), &r, false); err != nil {
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
	if err := membershipError(s.node.AddVoter(ctx, r.NodeID, r.RaftAddr)); err != nil {
		return err
	}
	return s.listMembers(c)
}

func (s *Server) removeMember(c *fiber.Ctx) error {
	ctx, cancel := context.WithTimeout(c.UserContext(), 10*time.Second)
	defer cancel()
	if err := membershipError(s.node.RemoveServer(ctx, c.Params("id"))); err != nil {
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

func membershipError(err error) error {
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
	return proposeError(err)
}

func validHostPort(s string) bool {
	host, port, err := splitHostPort(s)
	return err == nil && host != "" && port != "" && port != "0"
}

func splitHostPort(s string) (string, string, error) {
	i := strings.LastIndexByte(s, ':')
	if i < 0 {
		return "", "", errors.New("no port")
	}
	return strings.Trim(s[:i], "[]"), s[i+1:], nil
}

// JoinCluster asks the group to add this node as a voter, and retries
// until a member accepts or ctx ends. It asks the leader gossip knows
// first, then any other member of the shard in the pool, then hints
// (HTTP "host:port" of members, e.g. from --join-http): any member will
// do, since membership changes are forwarded to the leader. A node that
// opened with Raft state is already a member and need not call it.
func (s *Server) JoinCluster(ctx context.Context, hints []string) error {
	body, _ := json.Marshal(AddMemberRequest{NodeID: s.cfg.NodeID, RaftAddr: s.node.RaftAddr()})
	hc := &http.Client{Timeout: 15 * time.Second}
	var last error
	for {
		if s.node.LeaderID() != "" {
			return nil // a leader talks to us: someone added us already
		}
		for _, addr := range s.joinTargets(hints) {
			if last = s.askToJoin(ctx, hc, addr, body); last == nil {
				return nil
			}
		}
		if last == nil {
			last = errors.New("no member of the shard is known yet")
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("shard: join shard %s: %w (last: %v)", s.cfg.ShardID, ctx.Err(), last)
		case <-time.After(500 * time.Millisecond):
		}
	}
}

func (s *Server) joinTargets(hints []string) []string {
	var out []string
	seen := map[string]bool{s.advertisedHTTP(): true}
	add := func(a string) {
		a = strings.TrimSuffix(strings.TrimPrefix(strings.TrimPrefix(a, "http://"), "https://"), "/")
		if a != "" && !seen[a] {
			seen[a] = true
			out = append(out, a)
		}
	}
	if p := s.cfg.Gossip; p != nil {
		if m, ok := p.Leader(s.cfg.ShardID); ok {
			add(m.Meta.HTTPAddr)
		}
		for _, m := range p.Members() {
			if m.Meta.Role == gossip.RoleShard && m.Meta.ShardID == s.cfg.ShardID {
				add(m.Meta.HTTPAddr)
			}
		}
	}
	for _, h := range hints {
		add(h)
	}
	return out
}

func (s *Server) askToJoin(ctx context.Context, hc *http.Client, addr string, body []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+addr+"/internal/v1/members", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+s.cfg.ClusterSecret)
	req.Header.Set("Content-Type", "application/json")
	res, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		var b apierr.Body
		_ = json.NewDecoder(res.Body).Decode(&b)
		if b.Error != nil {
			return fmt.Errorf("%s: %d %s", addr, res.StatusCode, b.Error.Message)
		}
		return fmt.Errorf("%s: status %d", addr, res.StatusCode)
	}
	return nil
}

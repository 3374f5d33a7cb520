package control

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/cockroachdb/pebble"
	"github.com/gofiber/fiber/v2"

	"github.com/jobbie/jobbie/control/state"
	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/gossip"
	"github.com/jobbie/jobbie/internal/pki"
	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/wire"
)

// How control runs as a group of 1, 3 or 5 nodes (the shard's way, see
// shard/api/forward.go): a node with no state either bootstraps a group of
// its own or, given Config.Join, asks a member to add it (POST
// /internal/v1/members, forwarded to the leader); Raft is mutual TLS
// between control certificates. Writes go to the leader (forward.go);
// leader-only work (the signing key, usage pulls, invoice freezing) checks
// IsLeader, so it starts on whichever node wins an election.

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

// NodeStatus is GET /internal/v1/status: this node's view of its group.
type NodeStatus struct {
	replica.Status
	HTTPAddr   string `json:"http_addr"`
	RaftAddr   string `json:"raft_addr"`
	LeaderHTTP string `json:"leader_http,omitempty"`
}

// Status is this node's view of its group.
func (s *Server) Status() (NodeStatus, error) {
	node, release, err := s.acquire()
	if err != nil {
		return NodeStatus{}, err
	}
	defer release()
	out := NodeStatus{Status: node.Status(), HTTPAddr: s.AdvertisedHTTP(), RaftAddr: node.RaftAddr()}
	out.LeaderHTTP, _ = s.leaderHTTP(node)
	return out, nil
}

// recordMemberHTTP proposes a member's HTTP address unless the state
// already holds it.
func (s *Server) recordMemberHTTP(ctx context.Context, id, addr string) error {
	have, err := viewValue(s, func(r pebble.Reader) (string, error) {
		b, _, err := state.MemberHTTP(r, id)
		return b, err
	})
	if err != nil || have == addr {
		return err
	}
	_, err = propose(ctx, s, state.OpSetMemberHTTP, &state.SetMemberHTTPCmd{NodeID: id, HTTPAddr: addr})
	return err
}

func (s *Server) getMembers(c *fiber.Ctx) error {
	node, release, err := s.acquire()
	if err != nil {
		return err
	}
	defer release()
	ms, err := node.Members()
	if err != nil {
		return err
	}
	out := wire.MemberList{LeaderID: node.LeaderID(), Members: make([]wire.Member, 0, len(ms))}
	for _, m := range ms {
		b, _, err := state.MemberHTTP(node.DB(), m.ID)
		if err != nil {
			return err
		}
		out.Members = append(out.Members, wire.Member{NodeID: m.ID, RaftAddr: m.Addr, Voter: m.Voter, Leader: m.Leader, HTTPAddr: b})
	}
	return c.JSON(out)
}

func (s *Server) postMember(c *fiber.Ctx) error {
	var r wire.AddMemberRequest
	if err := decode(c, &r); err != nil {
		return err
	}
	switch {
	case !shardIDRE.MatchString(r.NodeID):
		return apierr.Field("node_id", "node_id is required: 1-63 letters, digits, '.', '_' or '-'")
	case !hostPort(r.RaftAddr):
		return apierr.Field("raft_addr", "raft_addr must be host:port with a port other than 0")
	case r.HTTPAddr != "" && !hostPort(r.HTTPAddr):
		return apierr.Field("http_addr", "http_addr must be host:port with a port other than 0")
	}
	if err := s.membership(c.UserContext(), func(ctx context.Context, n *replica.Node) error {
		return n.AddVoter(ctx, r.NodeID, r.RaftAddr)
	}); err != nil {
		return err
	}
	if r.HTTPAddr != "" {
		if err := s.recordMemberHTTP(c.UserContext(), r.NodeID, r.HTTPAddr); err != nil {
			return err
		}
	}
	return s.getMembers(c)
}

func (s *Server) deleteMember(c *fiber.Ctx) error {
	if err := s.membership(c.UserContext(), func(ctx context.Context, n *replica.Node) error {
		return n.RemoveServer(ctx, c.Params("id"))
	}); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}

// membership runs a membership change on the node and maps its errors.
func (s *Server) membership(ctx context.Context, change func(context.Context, *replica.Node) error) error {
	node, release, err := s.acquire()
	if err != nil {
		return err
	}
	defer release()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	switch err := change(ctx, node); {
	case err == nil:
		return nil
	case errors.Is(err, replica.ErrUnknownMember):
		return apierr.New(apierr.NotFound, "%v", err)
	case errors.Is(err, replica.ErrMemberConflict):
		return apierr.New(apierr.Conflict, "%v", err)
	default:
		return node.ProposeError(err)
	}
}

func hostPort(a string) bool {
	i := strings.LastIndexByte(a, ':')
	return i > 0 && a[i+1:] != "" && a[i+1:] != "0"
}

// Membership reports whether this node is a member of the latest
// configuration it knows, whether it knows one, and whether Raft stopped
// itself (a leader that applied its own removal); see replica.Node.
func (s *Server) Membership() (member, known, stopped bool) {
	node, release, err := s.acquire()
	if err != nil {
		return false, false, false
	}
	defer release()
	return node.Membership()
}

// AdvertisedHTTP is the address other nodes reach this node's HTTP API on.
func (s *Server) AdvertisedHTTP() string {
	if s.cfg.AdvertiseHTTP != "" {
		return s.cfg.AdvertiseHTTP
	}
	return s.Addr()
}

// leaderHTTP is the leader's HTTP address: Raft names the leader; the
// replicated state (each member's address, recorded when it joined and
// when it leads) or else gossip says where that node serves. The address
// is only a hint: the forward admits nothing but a control certificate at
// the other end.
func (s *Server) leaderHTTP(node *replica.Node) (string, bool) {
	id := node.LeaderID()
	switch {
	case id == "":
		return "", false
	case id == s.cfg.NodeID:
		return s.AdvertisedHTTP(), true
	}
	if b, ok, err := state.MemberHTTP(node.DB(), id); err == nil && ok && len(b) > 0 {
		return b, true
	}
	if s.cfg.Gossip == nil {
		return "", false
	}
	for _, m := range s.cfg.Gossip.Members() {
		if m.Meta.Role == gossip.RoleControl && m.Meta.NodeID == id && m.Meta.HTTPAddr != "" {
			return m.Meta.HTTPAddr, true
		}
	}
	return "", false
}

// join asks the members in Config.Join (and the control nodes gossip
// knows) to add this node, until one does or a leader reaches it.
func (s *Server) join(ctx context.Context, node *replica.Node) error {
	body, _ := json.Marshal(wire.AddMemberRequest{NodeID: s.cfg.NodeID, RaftAddr: s.raftAdvertise(node), HTTPAddr: s.AdvertisedHTTP()})
	hc := &http.Client{Timeout: 15 * time.Second, Transport: &http.Transport{TLSClientConfig: s.cfg.TLS.Client(pki.Roles(pki.RoleControl))}}
	defer hc.CloseIdleConnections()
	var last error
	for {
		if node.LeaderID() != "" {
			return nil // a leader talks to us: we were added
		}
		for _, addr := range s.joinTargets() {
			if last = askToJoin(ctx, hc, addr, body); last == nil {
				return nil
			}
		}
		if last == nil {
			last = errors.New("no control node known yet")
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("control: join the control group: %w (last: %v)", ctx.Err(), last)
		case <-time.After(500 * time.Millisecond):
		}
	}
}

func (s *Server) raftAdvertise(node *replica.Node) string {
	if s.cfg.RaftAdvertise != "" {
		return s.cfg.RaftAdvertise
	}
	return node.RaftAddr()
}

func (s *Server) joinTargets() []string {
	seen := map[string]bool{s.AdvertisedHTTP(): true}
	var out []string
	add := func(a string) {
		a = strings.TrimSuffix(strings.TrimPrefix(a, "https://"), "/")
		if a != "" && !seen[a] {
			seen[a] = true
			out = append(out, a)
		}
	}
	for _, a := range s.cfg.Join {
		add(a)
	}
	if s.cfg.Gossip != nil {
		for _, m := range s.cfg.Gossip.Members() {
			if m.Meta.Role == gossip.RoleControl && m.Meta.NodeID != s.cfg.NodeID {
				add(m.Meta.HTTPAddr)
			}
		}
	}
	return out
}

func askToJoin(ctx context.Context, hc *http.Client, addr string, body []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "https://"+addr+"/internal/v1/members", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(res.Body, 4096))
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("%s answered %d: %s", addr, res.StatusCode, bytes.TrimSpace(msg))
	}
	return nil
}

// leaderDuties runs what only the leader does on taking the lead: make
// sure a signing key exists and the state holds this node's HTTP address.
// It checks again on every leadership change.
func (s *Server) leaderDuties(ctx context.Context, node *replica.Node) {
	changes, cancel := node.Subscribe()
	defer cancel()
	t := time.NewTicker(time.Second)
	defer t.Stop()
	done := false
	for {
		if node.IsLeader() && !done {
			err := s.ensureSigningKey(ctx)
			if err == nil {
				err = s.recordMemberHTTP(ctx, s.cfg.NodeID, s.AdvertisedHTTP())
			}
			if err != nil && ctx.Err() == nil {
				s.log.Warn("control: leader duties", "err", err)
			} else {
				done = err == nil
			}
		}
		if !node.IsLeader() {
			done = false
		}
		select {
		case <-ctx.Done():
			return
		case <-changes:
		case <-t.C:
		}
	}
}

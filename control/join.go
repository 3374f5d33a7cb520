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

	"github.com/jobbie/jobbie/internal/gossip"
	"github.com/jobbie/jobbie/internal/pki"
	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/wire"
)

// Membership reports whether this node is a member of the latest
// configuration it knows, whether it knows one, and whether Raft stopped
// itself (a leader that applied its own removal); see replica.Node.
func (s *Server) Membership() (member, known, stopped bool) {
	node, release, err := s.Acquire()
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

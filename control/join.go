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

// join asks the members in cfg.Join (and the control nodes gossip knows)
// to add node, which serves HTTP at advertised, until one does or a
// leader reaches it.
func join(ctx context.Context, cfg Config, node *replica.Node, advertised string) error {
	body, _ := json.Marshal(wire.AddMemberRequest{NodeID: cfg.NodeID, RaftAddr: raftAdvertise(cfg, node), HTTPAddr: advertised})
	hc := &http.Client{Timeout: 15 * time.Second, Transport: &http.Transport{TLSClientConfig: cfg.TLS.Client(pki.Roles(pki.RoleControl))}}
	defer hc.CloseIdleConnections()
	var last error
	for {
		if node.LeaderID() != "" {
			return nil // a leader talks to us: we were added
		}
		for _, addr := range joinTargets(cfg, advertised) {
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

func raftAdvertise(cfg Config, node *replica.Node) string {
	if cfg.RaftAdvertise != "" {
		return cfg.RaftAdvertise
	}
	return node.RaftAddr()
}

func joinTargets(cfg Config, advertised string) []string {
	seen := map[string]bool{advertised: true}
	var out []string
	add := func(a string) {
		a = strings.TrimSuffix(strings.TrimPrefix(a, "https://"), "/")
		if a != "" && !seen[a] {
			seen[a] = true
			out = append(out, a)
		}
	}
	for _, a := range cfg.Join {
		add(a)
	}
	if cfg.Gossip != nil {
		for _, m := range cfg.Gossip.Members() {
			if m.Meta.Role == gossip.RoleControl && m.Meta.NodeID != cfg.NodeID {
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

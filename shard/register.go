package shard

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
	"github.com/jobbie/jobbie/wire"
)

// Register records this shard cluster with the control plane (POST
// /control/v1/shards/register, docs/internal-api.md): its members whose
// HTTP address is known, capacity and version. controlURL is one URL or
// several separated by commas (the nodes of a control group); the control
// nodes gossip knows are tried after them. Any control node takes the
// registration (a follower forwards it to its leader), so Register moves
// to the next one when a node cannot be reached or answers 503; a
// registration is idempotent, so sending it again is safe. It sends
// nothing when the record would equal last (the value a previous call
// returned) and returns the record sent, or last.
//
// The node presents its shard certificate and sends only to a server
// whose certificate is control's, whatever address it was given.
func (n *Node) Register(ctx context.Context, controlURL string, capacity uint64, last string) (string, error) {
	ms, err := n.Members()
	if err != nil {
		return last, err
	}
	r := wire.ShardRegistration{ShardID: n.cfg.ShardID, Capacity: capacity, Version: n.cfg.Version}
	for _, m := range ms {
		if m.HTTPAddr != "" {
			r.Members = append(r.Members, wire.ShardMember{NodeID: m.NodeID, HTTPAddr: m.HTTPAddr, RaftAddr: m.RaftAddr})
		}
	}
	body, _ := json.Marshal(r)
	if string(body) == last {
		return last, nil
	}
	var errs []error
	for _, base := range n.controlBases(controlURL) {
		err := n.registerAt(ctx, base, body)
		if err == nil {
			return string(body), nil
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	if len(errs) == 0 {
		return last, errors.New("no control URL to register with")
	}
	return last, errors.Join(errs...)
}

// controlBases lists the control nodes to try: the configured ones, then
// those gossip knows.
func (n *Node) controlBases(controlURL string) []string {
	seen := map[string]bool{}
	var out []string
	add := func(u string) {
		if u = strings.TrimRight(strings.TrimSpace(u), "/"); u != "" && !seen[u] {
			seen[u] = true
			out = append(out, u)
		}
	}
	for _, u := range strings.Split(controlURL, ",") {
		add(u)
	}
	if p := n.cfg.Gossip; p != nil {
		for _, m := range p.Members() {
			if m.Meta.Role == gossip.RoleControl && m.Meta.HTTPAddr != "" {
				add("https://" + m.Meta.HTTPAddr)
			}
		}
	}
	return out
}

func (n *Node) registerAt(ctx context.Context, base string, body []byte) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/control/v1/shards/register", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := n.control.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(res.Body, 4096))
		return fmt.Errorf("control %s answered %d: %s", base, res.StatusCode, bytes.TrimSpace(msg))
	}
	return nil
}

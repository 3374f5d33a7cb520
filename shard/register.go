package shard

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"time"

	"github.com/jobbie/jobbie/internal/controlclient"
	"github.com/jobbie/jobbie/internal/pki"
	"github.com/jobbie/jobbie/wire"
)

// Register records this shard cluster with the control plane (POST
// /control/v1/shards/register, docs/internal-api.md): its members whose
// HTTP address is known, capacity and version. controlURL is one URL or
// several separated by commas (the nodes of a control group); the control
// nodes gossip knows are tried after them (internal/controlclient). Any
// control node takes the registration (a follower forwards it to its
// leader), and a registration is idempotent, so it moves on to the next
// node when one cannot be reached, loses the answer or fails. It sends
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
	cc := n.control.client(controlURL, func() *controlclient.Client {
		// A hung or stopped control node costs a registration 10 s at
		// most (2 s to connect), not the caller's whole patience.
		return controlclient.New(controlclient.Config{URL: controlURL, TLS: n.cfg.TLS.Client(pki.Roles(pki.RoleControl)),
			Gossip: n.cfg.Gossip, Timeout: 10 * time.Second, Repeatable: true})
	})
	if err := cc.JSON(ctx, http.MethodPost, "/control/v1/shards/register", "", json.RawMessage(body), http.StatusOK, nil); err != nil {
		return last, err
	}
	return string(body), nil
}

// controlLink is the node's client of control, made for the control URL
// it is first asked to use and made again if that changes.
type controlLink struct {
	mu  sync.Mutex
	url string
	cc  *controlclient.Client
}

func (l *controlLink) client(url string, build func() *controlclient.Client) *controlclient.Client {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.cc == nil || l.url != url {
		if l.cc != nil {
			l.cc.Close()
		}
		l.cc, l.url = build(), url
	}
	return l.cc
}

func (l *controlLink) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.cc != nil {
		l.cc.Close()
	}
}

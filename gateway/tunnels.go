package gateway

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"slices"
	"sync"

	"github.com/jobbie/jobbie/internal/pki"
	"github.com/jobbie/jobbie/internal/tunnel"
	"github.com/jobbie/jobbie/wire"
)

// Self-hosted shards dial the gateway's tunnel listener (Config.TunnelAddr)
// with certificates of the self-hosted CA (Config.SelfHostedCA), which is
// trusted there and nowhere else. A node is admitted while control lists
// its shard as a self-hosted shard of the tenant its certificate names,
// with the node among those that joined; a shard that leaves the list
// (revoked), or a node that leaves its shard's (removed), is cut off at
// once and refused from then on. The list is
// polled every Config.RevocationInterval; the handshake reads it from
// memory.
type tunnels struct {
	reg     *tunnel.Registry
	control *controlClient

	mu     sync.RWMutex
	shards map[string]wire.SelfHostedShard // by id
}

func newTunnels(cfg Config, control *controlClient) (*tunnels, error) {
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(cfg.SelfHostedCA) {
		return nil, errors.New("gateway: SelfHostedCA holds no certificate")
	}
	t := &tunnels{control: control, shards: map[string]wire.SelfHostedShard{}}
	reg, err := tunnel.NewRegistry(tunnel.RegistryConfig{TLS: cfg.TLS, ClientCAs: pool, Authorize: t.authorize, Logger: cfg.Logger})
	if err != nil {
		return nil, fmt.Errorf("gateway: %w", err)
	}
	t.reg = reg
	return t, nil
}

// authorize admits a joined node of a listed shard of the tenant its
// certificate names.
func (t *tunnels) authorize(id pki.Identity) error {
	t.mu.RLock()
	sh, ok := t.shards[id.Shard]
	t.mu.RUnlock()
	if !ok || id.Tenant == "" || sh.TenantID != id.Tenant || !slices.Contains(sh.Nodes, id.Node) {
		return fmt.Errorf("gateway: %s is not a joined node of a self-hosted shard of its tenant", id)
	}
	return nil
}

// owner is the tenant owning shard, "" for a hosted one: the shard
// client requires a route's nodes to show it.
func (t *tunnels) owner(shard string) string {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.shards[shard].TenantID
}

// refresh reads control's list and revokes the shards that left it, and
// the nodes that left a listed shard's nodes (removed, their ids retired
// for good): a live tunnel of theirs is cut now, not when it next drops.
func (t *tunnels) refresh(ctx context.Context) error {
	var list wire.SelfHostedShards
	if err := t.control.getJSON(ctx, "/internal/v1/shards/self-hosted", "", &list); err != nil {
		return err
	}
	next := make(map[string]wire.SelfHostedShard, len(list.Shards))
	for _, sh := range list.Shards {
		next[sh.ID] = sh
	}
	t.mu.Lock()
	var gone []string
	var goneNodes []wire.SelfHostedShard // per shard, its nodes that left
	for id, was := range t.shards {
		now, ok := next[id]
		if !ok {
			gone = append(gone, id)
			continue
		}
		var left []string
		for _, n := range was.Nodes {
			if !slices.Contains(now.Nodes, n) {
				left = append(left, n)
			}
		}
		if len(left) > 0 {
			goneNodes = append(goneNodes, wire.SelfHostedShard{ID: id, Nodes: left})
		}
	}
	t.shards = next
	t.mu.Unlock()
	for _, id := range gone {
		t.reg.Revoke(id)
	}
	for _, sh := range goneNodes {
		for _, n := range sh.Nodes {
			t.reg.RevokeNode(sh.ID, n)
		}
	}
	return nil
}

// serve accepts agents on ln until the registry closes.
func (t *tunnels) serve(ln net.Listener) error {
	if err := t.reg.Serve(ln); err != nil && !errors.Is(err, tunnel.ErrClosed) {
		return err
	}
	return nil
}

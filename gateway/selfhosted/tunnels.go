package selfhosted

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"sync"

	"github.com/jobbie/jobbie/gateway/controlapi"
	"github.com/jobbie/jobbie/internal/pki"
	"github.com/jobbie/jobbie/internal/shardclient"
	"github.com/jobbie/jobbie/internal/tunnel"
	"github.com/jobbie/jobbie/wire"
)

// Tunnels is the tunnel listener's side of self-hosted shards. Their
// nodes dial the gateway's tunnel listener (gateway Config.TunnelAddr)
// with certificates of the self-hosted CA (Config.SelfHostedCA), which is
// trusted there and nowhere else. A node is admitted while control lists
// its shard as a self-hosted shard of the tenant its certificate names,
// with the node among those that joined; a shard that leaves the list
// (revoked), or a node that leaves its shard's (removed), is cut off at
// once and refused from then on. The list is polled (Refresh); the
// handshake reads it from memory.
//
// The gateway reaches a connected node through the shard client
// (Attach), for the tenant's requests, the trust bundles it pushes
// (trustpush.go) and the health of the tenant's shards (health.go).
type Tunnels struct {
	reg     *tunnel.Registry
	control controlapi.Control
	log     *slog.Logger
	nodes   *shardclient.Client // Attach sets it

	mu     sync.RWMutex
	shards map[string]wire.SelfHostedShard // by id
}

// TunnelsConfig configures a tunnel listener.
type TunnelsConfig struct {
	TLS          *pki.Credentials // the gateway's, presented to dialing nodes
	SelfHostedCA []byte           // PEM: the CA dialing nodes' certificates come from
	Control      controlapi.Control
	Logger       *slog.Logger
}

// NewTunnels builds the registry of tunnels; Serve accepts them.
func NewTunnels(cfg TunnelsConfig) (*Tunnels, error) {
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(cfg.SelfHostedCA) {
		return nil, errors.New("gateway: SelfHostedCA holds no certificate")
	}
	t := &Tunnels{control: cfg.Control, log: cfg.Logger, shards: map[string]wire.SelfHostedShard{}}
	reg, err := tunnel.NewRegistry(tunnel.RegistryConfig{TLS: cfg.TLS, ClientCAs: pool, Authorize: t.authorize, Logger: cfg.Logger})
	if err != nil {
		return nil, fmt.Errorf("gateway: %w", err)
	}
	t.reg = reg
	return t, nil
}

// Registry is where the shard client dials a node's tunnel
// (shardclient.Config.Tunnel).
func (t *Tunnels) Registry() *tunnel.Registry { return t.reg }

// Attach gives t the shard client that dials through its registry. It is
// called once, before Serve.
func (t *Tunnels) Attach(nodes *shardclient.Client) { t.nodes = nodes }

// authorize admits a joined node of a listed shard of the tenant its
// certificate names.
func (t *Tunnels) authorize(id pki.Identity) error {
	t.mu.RLock()
	sh, ok := t.shards[id.Shard]
	t.mu.RUnlock()
	if !ok || id.Tenant == "" || sh.TenantID != id.Tenant || !slices.Contains(sh.Nodes, id.Node) {
		return fmt.Errorf("gateway: %s is not a joined node of a self-hosted shard of its tenant", id)
	}
	return nil
}

// Owner is the tenant owning shard, "" for a hosted one: the shard
// client requires a route's nodes to show it (shardclient.Config.ShardOwner).
func (t *Tunnels) Owner(shard string) string {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.shards[shard].TenantID
}

// Refresh reads control's list and revokes the shards that left it, and
// the nodes that left a listed shard's nodes (removed, their ids retired
// for good): a live tunnel of theirs is cut now, not when it next drops.
func (t *Tunnels) Refresh(ctx context.Context) error {
	list, err := t.control.SelfHostedShards(ctx)
	if err != nil {
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

// Serve accepts agents on ln until Close.
func (t *Tunnels) Serve(ln net.Listener) error {
	if err := t.reg.Serve(ln); err != nil && !errors.Is(err, tunnel.ErrClosed) {
		return err
	}
	return nil
}

// Close ends Serve and every tunnel.
func (t *Tunnels) Close() error { return t.reg.Close() }

// Revoke cuts shard's tunnels now (a shard revoked through this gateway;
// the others see it at their next Refresh). A nil t has none.
func (t *Tunnels) Revoke(shard string) {
	if t != nil {
		t.reg.Revoke(shard)
	}
}

// RevokeNode cuts node of shard as Revoke cuts a shard.
func (t *Tunnels) RevokeNode(shard, node string) {
	if t != nil {
		t.reg.RevokeNode(shard, node)
	}
}

package selfhosted

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/jobbie/jobbie/internal/tunnel"
)

// Trust bundles for self-hosted shards (wire.TrustBundle; local.go is the
// node's side). A gateway pushes, to every self-hosted node connected to
// it, the bundle control builds for the node's shard: at once when the
// node connects, then every interval (gateway Config.TrustPushInterval). A node's local API
// judges keys by the newest bundle it holds, so a revocation reaches it
// within about that interval while the hosted side is reachable, and the
// local API refuses keys once no bundle has come for its bound.
//
// Each bundle is fetched from control for the push (one fetch per shard a
// round, shared by its nodes): a gateway that cannot reach control pushes
// nothing rather than an old bundle, so a node's freshness is control's.

// trustPushTimeout bounds one push to one node.
const trustPushTimeout = 5 * time.Second

// trustPusher remembers when each node was last pushed to.
type trustPusher struct {
	t        *Tunnels
	interval time.Duration
	pushed   map[string]time.Time // "<shard>/<node>" → the last push that succeeded
}

// PushTrust pushes every interval, and to a node as it connects, until
// ctx ends.
func (t *Tunnels) PushTrust(ctx context.Context, interval time.Duration) {
	p := &trustPusher{t: t, interval: interval, pushed: map[string]time.Time{}}
	tick := time.NewTicker(min(interval, time.Second))
	defer tick.Stop()
	for {
		changed := t.reg.Changed()
		p.round(ctx, time.Now())
		select {
		case <-ctx.Done():
			return
		case <-changed:
		case <-tick.C:
		}
	}
}

// round pushes to the connected nodes not pushed to within the interval:
// a node that just connected, or whose last push failed, is due at once.
func (p *trustPusher) round(ctx context.Context, now time.Time) {
	due := map[string][]string{} // shard → nodes
	live := map[string]bool{}
	for _, si := range p.t.reg.Sessions() {
		k := si.Node.Shard + "/" + si.Node.Node
		live[k] = true
		if last, ok := p.pushed[k]; !ok || now.Sub(last) >= p.interval || last.Before(si.Since) {
			due[si.Node.Shard] = append(due[si.Node.Shard], si.Node.Node)
		}
	}
	for k := range p.pushed {
		if !live[k] {
			delete(p.pushed, k)
		}
	}
	for shard, nodes := range due {
		tid := p.t.Owner(shard)
		if tid == "" {
			continue // left control's list: the registry cuts it
		}
		b, err := p.t.control.TrustBundle(ctx, tid, shard)
		if err != nil {
			if ctx.Err() == nil {
				p.t.log.Warn("gateway: no trust bundle for a self-hosted shard from control; not pushing", "shard", shard, "err", err)
			}
			continue
		}
		raw, err := json.Marshal(b)
		if err != nil {
			continue
		}
		for _, node := range nodes {
			if err := p.t.pushTrust(shard, node, raw); err != nil {
				p.t.log.Warn("gateway: pushing a trust bundle to a self-hosted node failed", "shard", shard, "node", node, "err", err)
				continue
			}
			p.pushed[shard+"/"+node] = now
		}
	}
}

// pushTrust posts a bundle to one node over its tunnel.
func (t *Tunnels) pushTrust(shard, node string, bundle []byte) error {
	n, err := t.nodes.Node(tunnel.Addr(shard, node))
	if err != nil {
		return err
	}
	req := fasthttp.AcquireRequest()
	resp := fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.Header.SetMethod(http.MethodPost)
	req.SetRequestURI(TrustPushPath)
	req.Header.SetContentType("application/json")
	req.SetBodyRaw(bundle)
	if err := n.Do(req, resp, time.Now().Add(trustPushTimeout)); err != nil {
		return err
	}
	if resp.StatusCode() != http.StatusNoContent {
		return fmt.Errorf("the node answered %d: %.200s", resp.StatusCode(), resp.Body())
	}
	return nil
}

// TrustPushPath is where a node takes a bundle.
const TrustPushPath = "/internal/v1/trust"

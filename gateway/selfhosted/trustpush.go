package selfhosted

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/jobbie/jobbie/internal/shardclient"
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
//
// Pushes go on concurrently, each with its own deadline
// (trustPushTimeout), in rounds per tenant: a round takes the due nodes of
// one tenant's shards, and pushes to them at most trustPushWorkers at once
// (one tenant's slots: no other tenant waits for them). A node whose push
// is under way is not due again until it ends. So a node that stalls (a
// tenant's own, on its own network) delays its own bundles, and its
// tenant's other nodes only once trustPushWorkers of them stall at once,
// by at most trustPushTimeout; never another tenant's.

const (
	// trustPushTimeout bounds one push to one node.
	trustPushTimeout = 5 * time.Second
	// trustPushWorkers is how many of one tenant's nodes are pushed to at
	// once.
	trustPushWorkers = 8
	// trustPushAnswer bounds a node's answer to a push.
	trustPushAnswer = 64 << 10
)

// trustPusher remembers when each node was last pushed to, and which
// pushes are under way.
type trustPusher struct {
	t        *Tunnels
	interval time.Duration
	wg       sync.WaitGroup // the rounds under way

	mu     sync.Mutex
	pushed map[string]time.Time     // "<shard>/<node>" → the last push that succeeded
	busy   map[string]bool          // "<shard>/<node>" → a push under way
	slots  map[string]chan struct{} // by tenant: its pushes under way, at most trustPushWorkers (one small channel per tenant seen)
}

// PushTrust pushes every interval, and to a node as it connects, until
// ctx ends; it returns once the pushes under way have ended.
func (t *Tunnels) PushTrust(ctx context.Context, interval time.Duration) {
	p := &trustPusher{t: t, interval: interval, pushed: map[string]time.Time{}, busy: map[string]bool{}, slots: map[string]chan struct{}{}}
	defer p.wg.Wait()
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

// round starts a round per tenant for its connected nodes not pushed to
// within the interval, and with no push under way: a node that just
// connected, or whose last push failed, is due at once.
func (p *trustPusher) round(ctx context.Context, now time.Time) {
	due := map[string]map[string][]string{} // tenant → shard → nodes
	live := map[string]bool{}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, si := range p.t.reg.Sessions() {
		k := si.Node.Shard + "/" + si.Node.Node
		live[k] = true
		tid := p.t.Owner(si.Node.Shard)
		if tid == "" || p.busy[k] {
			continue // left control's list (the registry cuts it), or its push is not over
		}
		if last, ok := p.pushed[k]; !ok || now.Sub(last) >= p.interval || last.Before(si.Since) {
			if due[tid] == nil {
				due[tid] = map[string][]string{}
			}
			due[tid][si.Node.Shard] = append(due[tid][si.Node.Shard], si.Node.Node)
			p.busy[k] = true
		}
	}
	for k := range p.pushed {
		if !live[k] {
			delete(p.pushed, k)
		}
	}
	for tid, shards := range due {
		if p.slots[tid] == nil {
			p.slots[tid] = make(chan struct{}, trustPushWorkers)
		}
		slots := p.slots[tid]
		p.wg.Go(func() { p.tenantRound(ctx, tid, slots, shards, now) })
	}
}

// tenantRound pushes each shard's bundle to its due nodes, in the
// tenant's slots.
func (p *trustPusher) tenantRound(ctx context.Context, tid string, slots chan struct{}, shards map[string][]string, now time.Time) {
	var wg sync.WaitGroup
	defer wg.Wait()
	for shard, nodes := range shards {
		raw, err := p.bundle(ctx, tid, shard)
		for _, node := range nodes {
			if err != nil {
				p.done(shard, node, time.Time{})
				continue
			}
			wg.Go(func() {
				select {
				case slots <- struct{}{}:
				case <-ctx.Done():
					p.done(shard, node, time.Time{})
					return
				}
				defer func() { <-slots }()
				if err := p.t.pushTrust(shard, node, raw); err != nil {
					p.t.log.Warn("gateway: pushing a trust bundle to a self-hosted node failed", "shard", shard, "node", node, "err", err)
					p.done(shard, node, time.Time{})
					return
				}
				p.done(shard, node, now)
			})
		}
	}
}

// bundle is shard's bundle from control, encoded.
func (p *trustPusher) bundle(ctx context.Context, tid, shard string) ([]byte, error) {
	b, err := p.t.control.TrustBundle(ctx, tid, shard)
	if err != nil {
		if ctx.Err() == nil {
			p.t.log.Warn("gateway: no trust bundle for a self-hosted shard from control; not pushing", "shard", shard, "err", err)
		}
		return nil, err
	}
	return json.Marshal(b)
}

// done ends a node's push: pushed at the round's time, or (zero) not.
func (p *trustPusher) done(shard, node string, pushed time.Time) {
	k := shard + "/" + node
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.busy, k)
	if !pushed.IsZero() {
		p.pushed[k] = pushed
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
	// A node answers 204: more than a short error is refused, not held.
	if err := n.DoAnswer(req, resp, time.Now().Add(trustPushTimeout), &shardclient.Answer{Max: trustPushAnswer}); err != nil {
		return err
	}
	if resp.StatusCode() != http.StatusNoContent {
		return fmt.Errorf("the node answered %d: %.200s", resp.StatusCode(), resp.Body())
	}
	return nil
}

// TrustPushPath is where a node takes a bundle.
const TrustPushPath = "/internal/v1/trust"

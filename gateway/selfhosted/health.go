package selfhosted

import (
	"encoding/json"
	"net/http"
	"sync"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/jobbie/jobbie/internal/tunnel"
	"github.com/jobbie/jobbie/wire"
)

// shardHealthTimeout bounds asking a self-hosted shard for its health:
// the list waits for the slowest shard, and a shard that does not answer
// is listed without it.
const shardHealthTimeout = time.Second

// Annotate sets, on each of a tenant's shards, the nodes that hold a
// tunnel to this gateway now (Connected; another gateway may hold the
// others'), and its Health as one such node tells it over its tunnel,
// all shards at once. A shard that fails to answer is listed without
// it: the list never fails for it. A nil t has no tunnels.
func (t *Tunnels) Annotate(requestID string, shards []wire.OwnedShard) {
	for i, sh := range shards {
		shards[i].Connected = []string{}
		for _, n := range sh.Nodes {
			if t != nil && t.reg.Connected(sh.ID, n) {
				shards[i].Connected = append(shards[i].Connected, n)
			}
		}
	}
	var wg sync.WaitGroup
	for i := range shards {
		if len(shards[i].Connected) > 0 {
			sh := &shards[i]
			wg.Go(func() { sh.Health = t.health(requestID, sh.ID, sh.Connected[0]) })
		}
	}
	wg.Wait()
}

// health is node's GET /api/v1/cluster of shard, or nil.
func (t *Tunnels) health(requestID, shard, node string) *wire.ClusterHealth {
	// The pool checks the tunnel's peer is that node of that shard; the
	// tunnel listener admitted it as a node of the tenant's shard.
	n, err := t.nodes.Node(tunnel.Addr(shard, node))
	if err != nil {
		t.log.Warn("gateway: no pool for a self-hosted node", "shard", shard, "node", node, "err", err)
		return nil
	}
	req := fasthttp.AcquireRequest()
	resp := fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.Header.SetMethod(http.MethodGet)
	req.SetRequestURI("/api/v1/cluster")
	req.Header.Set(wire.RequestIDHeader, requestID)
	if err := n.Do(req, resp, time.Now().Add(shardHealthTimeout)); err != nil {
		t.log.Info("gateway: a self-hosted shard's health did not come", "shard", shard, "node", node, "request_id", requestID, "err", err)
		return nil
	}
	var h wire.ClusterHealth
	if resp.StatusCode() != http.StatusOK || json.Unmarshal(resp.Body(), &h) != nil || h.ShardID != shard {
		t.log.Info("gateway: a self-hosted shard answered no health", "shard", shard, "node", node, "request_id", requestID,
			"status", resp.StatusCode())
		return nil
	}
	return &h
}

package proxy

import (
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"

	"github.com/jobbie/jobbie/gateway/admitted"
	"github.com/jobbie/jobbie/internal/shardclient"
	"github.com/jobbie/jobbie/wire"
)

// The gateway sees the worker's connection, the shard only the gateway's:
// a fetch's leases are given back here when its worker went away before
// the answer reached it (shardclient.GoneWorker).

// releaseIfGone releases the leases of a fetch answer (c's response)
// whose worker went away before it could be handed over.
// answer is the fetch's answer body (c's response's may be a stream).
func (px *Proxy) releaseIfGone(c *fiber.Ctx, r *admitted.Request, answer []byte) {
	rel, ok := shardclient.GoneWorker(c.Context().Conn(), c.Path(), c.Response().StatusCode(), c.Request().Body(), answer)
	if !ok {
		return
	}
	px.release(r, rel)
}

// release gives back the leases rel names, for r's namespace.
func (px *Proxy) release(r *admitted.Request, rel *wire.ReleaseRequest) {
	req := fasthttp.AcquireRequest()
	resp := fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	if shardclient.SetRelease(req, rel) != nil {
		return
	}
	req.Header.Set(wire.RequestIDHeader, r.RequestID)
	setPlanHeaders(&req.Header, r, false)
	h := px.hold(r, false)
	defer h.Close()
	p, err := px.toShard(r, r.NS, time.Time{}, func(p *placement) (bool, error) {
		req.Header.Set(wire.ShardNamespaceHeader, p.shardNS)
		if err := h.do(p, req, resp, time.Now().Add(shardclient.ReleaseTimeout)); err != nil {
			return false, err
		}
		return isMoving(resp), nil
	})
	if err != nil || resp.StatusCode() != fiber.StatusOK {
		ns := ""
		if p != nil {
			ns = p.shardNS
		}
		px.log.Warn("gateway: could not release the leases of a worker that went away; they run out instead",
			"namespace", ns, "worker", rel.WorkerID, "request_id", r.RequestID, "status", resp.StatusCode(), "err", err)
	}
}

package proxy

import (
	"encoding/json"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"

	"github.com/jobbie/jobbie/gateway/admitted"
	"github.com/jobbie/jobbie/internal/conncheck"
	"github.com/jobbie/jobbie/wire"
)

// A fetch's job is leased on the shard before the answer travels back.
// The shard sees the gateway's connection, which stays open when the
// worker's closes (a worker restarted mid-poll, a client timeout), so the
// gateway is the one that can tell the worker is gone: when the shard
// answers with jobs and the worker's connection has closed, it gives the
// leases back (POST /api/v1/release on the shard, for this worker_id and
// these attempts) instead of leaving them to run out.

// releaseTimeout bounds the release of a gone worker's leases.
const releaseTimeout = 5 * time.Second

// releaseIfGone releases the leases of a fetch answer (c's response)
// whose worker went away before it could be handed over.
func (px *Proxy) releaseIfGone(c *fiber.Ctx, r *admitted.Request) {
	if c.Response().StatusCode() != fiber.StatusOK || !conncheck.Gone(c.Context().Conn()) {
		return
	}
	rel, ok := wire.FetchedLeases(c.Path() == "/api/v1/fetch/batch", c.Request().Body(), c.Response().Body())
	if !ok {
		return
	}
	body, err := json.Marshal(rel)
	if err != nil {
		return
	}
	req := fasthttp.AcquireRequest()
	resp := fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.Header.SetMethod(fiber.MethodPost)
	req.SetRequestURI("/api/v1/release")
	req.Header.Set(wire.RequestIDHeader, r.RequestID)
	setPlanHeaders(&req.Header, r, false)
	req.Header.SetContentType(fiber.MIMEApplicationJSON)
	req.SetBodyRaw(body)
	p, err := px.toShard(r, r.NS, time.Time{}, func(p *placement) (bool, error) {
		req.Header.Set(wire.ShardNamespaceHeader, p.shardNS)
		if err := px.shards.Do(p.route, req, resp, time.Now().Add(releaseTimeout)); err != nil {
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

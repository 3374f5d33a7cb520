package api

import (
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"

	"github.com/jobbie/jobbie/internal/shardclient"
	"github.com/jobbie/jobbie/wire"
)

// A follower forwards a fetch to its leader and waits for the answer; the
// leader sees the follower's connection, which stays open. So when the
// answer carries jobs and the worker's own connection closed meanwhile,
// the follower gives the leases back through the leader (POST
// /api/v1/release) instead of leaving them to run out.

// releaseForwarded releases the leases of a forwarded fetch's answer when
// its worker went away before the answer reached it.
func (s *Server) releaseForwarded(c *fiber.Ctx, addr string, answer *fasthttp.Response) {
	rel, ok := shardclient.GoneWorker(c.Context().Conn(), c.Path(), answer.StatusCode(), c.Body(), answer.Body())
	if !ok {
		return
	}
	req := fasthttp.AcquireRequest()
	resp := fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	c.Request().Header.CopyTo(&req.Header) // the namespace and request id
	if shardclient.SetRelease(req, rel) != nil {
		return
	}
	req.Header.Del(fiber.HeaderConnection)
	req.Header.Del(fiber.HeaderAuthorization) // this node's certificate speaks for it
	req.Header.Set(wire.ForwardedHeader, s.cfg.NodeID)
	n, err := s.fwd.Node(addr)
	if err == nil {
		err = n.Do(req, resp, time.Now().Add(shardclient.ReleaseTimeout))
	}
	if err != nil || resp.StatusCode() != fiber.StatusOK {
		s.cfg.Logger.Warn("shard: could not release the leases of a worker that went away; they run out instead",
			"leader", addr, "worker", rel.WorkerID, "status", resp.StatusCode(), "err", err)
	}
}

package api

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"

	"github.com/jobbie/jobbie/internal/conncheck"
	"github.com/jobbie/jobbie/wire"
)

// A follower forwards a fetch to its leader and waits for the answer; the
// leader sees the follower's connection, which stays open. So when the
// answer carries jobs and the worker's own connection closed meanwhile,
// the follower gives the leases back through the leader (POST
// /api/v1/release) instead of leaving them to run out.

// releaseTimeout bounds that release.
const releaseTimeout = 5 * time.Second

// releaseForwarded releases the leases of a forwarded fetch's answer when
// its worker went away before the answer reached it.
func (s *Server) releaseForwarded(c *fiber.Ctx, addr string, answer *fasthttp.Response) {
	if answer.StatusCode() != fiber.StatusOK || !strings.HasPrefix(c.Path(), "/api/v1/fetch") || !conncheck.Gone(c.Context().Conn()) {
		return
	}
	rel, ok := wire.FetchedLeases(c.Path() == "/api/v1/fetch/batch", c.Body(), answer.Body())
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
	c.Request().Header.CopyTo(&req.Header) // the namespace and request id
	req.Header.Del(fiber.HeaderConnection)
	req.Header.Del(fiber.HeaderAuthorization) // this node's certificate speaks for it
	req.Header.SetMethod(fiber.MethodPost)
	req.SetRequestURI("/api/v1/release")
	req.Header.Set(wire.ForwardedHeader, s.cfg.NodeID)
	req.SetBodyRaw(body)
	n, err := s.fwd.Node(addr)
	if err == nil {
		err = n.Do(req, resp, time.Now().Add(releaseTimeout))
	}
	if err != nil || resp.StatusCode() != fiber.StatusOK {
		s.cfg.Logger.Warn("shard: could not release the leases of a worker that went away; they run out instead",
			"leader", addr, "worker", rel.WorkerID, "status", resp.StatusCode(), "err", err)
	}
}

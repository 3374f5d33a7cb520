package gateway

import (
	"encoding/json"
	"errors"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"

	"github.com/jobbie/jobbie/internal/apierr"
)

// ShardNamespaceHeader names the namespace a proxied request works in, as
// tenancy.ShardNamespace(tenant id, namespace).
const ShardNamespaceHeader = "X-Jobbie-Shard-Namespace"

// forward proxies a request to the shard of its namespace.
func (s *Server) forward(c *fiber.Ctx, r *call) error {
	return s.proxy(c, r, time.Now().Add(s.cfg.ShardTimeout))
}

// forwardLongPoll proxies a fetch, whose deadline must outlast the wait
// the worker asked for.
func (s *Server) forwardLongPoll(c *fiber.Ctx, r *call) error {
	wait := fetchWait(c.Request().Body(), s.cfg.LongPollDefault, s.cfg.LongPollMax)
	return s.proxy(c, r, time.Now().Add(wait+s.cfg.ShardTimeout))
}

// proxy sends the request to the shard's leader with the shard's
// credentials (the client's key never leaves the gateway) and copies the
// answer back. The body goes through untouched and uncopied. An answer
// that says the node is not the leader, or no answer, goes to
// retryShard; everything else is the client's answer as it came.
func (s *Server) proxy(c *fiber.Ctx, r *call, deadline time.Time) error {
	p, err := s.placements.lookup(r.key.TenantID, r.ns, r.requestID)
	if err != nil {
		return err
	}
	req := fasthttp.AcquireRequest()
	resp := fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)

	in := &c.Request().Header
	req.Header.SetMethodBytes(in.Method())
	if uri := in.RequestURI(); len(uri) > 0 && uri[0] == '/' {
		req.SetRequestURIBytes(uri) // as received: the path the route matched
	} else {
		req.SetRequestURIBytes(c.Request().URI().RequestURI()) // absolute-form
	}
	sc := p.route.current()
	req.Header.SetHost(sc.host)
	req.Header.SetBytesV(fiber.HeaderAuthorization, s.shardAuth)
	req.Header.Set(ShardNamespaceHeader, p.shardNS)
	req.Header.Set(apierr.RequestIDHeader, r.requestID)
	if ct := in.ContentType(); len(ct) > 0 {
		req.Header.SetContentTypeBytes(ct)
	}
	req.SetBodyRaw(c.Request().Body())

	err = sc.hc.DoDeadline(req, resp, deadline)
	if err != nil || notLeader(resp.StatusCode()) {
		if err := s.retryShard(r, p, sc, req, resp, err, deadline); err != nil {
			return err
		}
	}
	out := c.Response()
	out.SetStatusCode(resp.StatusCode())
	out.Header.SetContentTypeBytes(resp.Header.ContentType())
	if ra := resp.Header.Peek(fiber.HeaderRetryAfter); len(ra) > 0 {
		out.Header.SetBytesV(fiber.HeaderRetryAfter, ra)
	}
	out.SetBody(resp.Body())
	return nil
}

// shardFailure is the client's answer when no answer came from the shard.
// The shard's address stays in the log, never in the tenant's error.
func (s *Server) shardFailure(r *call, p *placement, sc *shardClient, err error) error {
	s.placements.retrySoon(p)
	if sc.shouldLog() {
		s.log.Warn("gateway: shard request failed", "shard", sc.host, "namespace", p.shardNS, "request_id", r.requestID, "err", err)
	}
	switch {
	case errors.Is(err, fasthttp.ErrNoFreeConns):
		return apierr.Retry(apierr.Unavailable, 1, "the shard of namespace %q is overloaded; retry shortly", r.ns)
	case errors.Is(err, fasthttp.ErrTimeout):
		return apierr.Retry(apierr.Unavailable, 1, "the shard of namespace %q did not answer in time; retry shortly", r.ns)
	}
	return apierr.Retry(apierr.Unavailable, 1, "the shard of namespace %q is unreachable; retry shortly", r.ns)
}

// fetchWait is the long-poll wait a fetch body asks for ("timeout", in
// seconds), bounded by max. Fetch bodies are a few dozen bytes, so
// decoding one costs little next to the wait itself.
func fetchWait(body []byte, def, max time.Duration) time.Duration {
	var f struct {
		Timeout *float64 `json:"timeout"`
	}
	if json.Unmarshal(body, &f) != nil || f.Timeout == nil {
		return def
	}
	d := time.Duration(*f.Timeout * float64(time.Second))
	switch {
	case d < 0:
		return 0
	case d > max:
		return max
	}
	return d
}

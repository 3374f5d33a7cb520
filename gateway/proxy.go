package gateway

import (
	"encoding/json"
	"errors"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/shardclient"
	"github.com/jobbie/jobbie/wire"
)

// forward proxies a request to the shard of its namespace.
func (s *Server) forward(c *fiber.Ctx, r *call) error {
	return s.proxy(c, r, time.Now().Add(s.cfg.ShardTimeout))
}

// forwardLongPoll proxies a fetch, whose deadline must outlast the wait
// the worker asked for. A wait out of bounds is refused here, with the
// shard's own rule (wire.FetchWait), before it travels. Jobs the shard
// leased to a worker that went away meanwhile are given back at once
// (releaseIfGone).
func (s *Server) forwardLongPoll(c *fiber.Ctx, r *call) error {
	wait, err := fetchWait(c.Request().Body())
	if err != nil {
		return err
	}
	if err := s.proxy(c, r, time.Now().Add(wait+s.cfg.ShardTimeout)); err != nil {
		return err
	}
	s.releaseIfGone(c, r)
	return nil
}

// proxy sends the request to the shard's leader with the shard's
// credentials (the client's key never leaves the gateway) and copies the
// answer back. The body goes through untouched and uncopied; of the
// client's headers only the content type does: every other header the
// shard sees is the gateway's (shardheaders.go). Elections
// and moved leaders are ridden out by shardclient.Do; everything else is
// the client's answer as it came.
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
	req.Header.Set(wire.ShardNamespaceHeader, p.shardNS)
	req.Header.Set(wire.RequestIDHeader, r.requestID)
	if r.scope.limited {
		req.Header.Set(wire.QueueScopeHeader, r.scope.header)
	}
	r.setPlanHeaders(&req.Header, r.createsJobs)
	if ct := in.ContentType(); len(ct) > 0 {
		req.Header.SetContentTypeBytes(ct)
	}
	req.SetBodyRaw(c.Request().Body())

	if err := s.shards.Do(p.route, req, resp, deadline); err != nil {
		return s.shardFailure(r, p, err)
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

// shardFailure is the client's answer when no usable answer came from the
// shard. The shard's address stays in the log, never in the tenant's error.
func (s *Server) shardFailure(r *call, p *placement, err error) error {
	if errors.Is(err, shardclient.ErrNoLeader) {
		return apierr.Retry(apierr.NoLeader, 1, "the shard of namespace %q has no leader right now; retry shortly", r.ns)
	}
	s.placements.retrySoon(p)
	var f *shardclient.Failure
	if errors.As(err, &f) && f.Log {
		s.log.Warn("gateway: shard request failed", "shard", f.Node, "namespace", p.shardNS, "request_id", r.requestID, "err", f.Err)
	}
	switch {
	case errors.As(err, &f) && f.Overloaded():
		return apierr.Retry(apierr.Unavailable, 1, "the shard of namespace %q is overloaded; retry shortly", r.ns)
	case errors.As(err, &f) && f.TimedOut():
		return apierr.Retry(apierr.Unavailable, 1, "the shard of namespace %q did not answer in time; retry shortly", r.ns)
	}
	return apierr.Retry(apierr.Unavailable, 1, "the shard of namespace %q is unreachable; retry shortly", r.ns)
}

// fetchWait is the long-poll wait a fetch body asks for ("timeout", in
// seconds), or the 400 the shard would answer. A body that does not
// decode gets the default: the shard refuses it with its own 400. Fetch
// bodies are a few dozen bytes, so decoding one costs little next to the
// wait itself.
func fetchWait(body []byte) (time.Duration, error) {
	var f struct {
		Timeout *float64 `json:"timeout"`
	}
	if json.Unmarshal(body, &f) != nil {
		return wire.DefaultFetchTimeout, nil
	}
	d, err := wire.FetchWait(f.Timeout)
	if err != nil {
		return 0, apierr.Field("timeout", "%v", err)
	}
	return d, nil
}

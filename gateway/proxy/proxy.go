package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"

	gojson "github.com/goccy/go-json"
	"github.com/gofiber/fiber/v2"
	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/jonboulle/clockwork"
	"github.com/valyala/fasthttp"

	"github.com/jobbie/jobbie/gateway/admitted"
	"github.com/jobbie/jobbie/gateway/controlapi"
	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/runners"
	"github.com/jobbie/jobbie/internal/shardclient"
	"github.com/jobbie/jobbie/wire"
)

// Config configures a Proxy; its fields are the gateway Config's of the
// same names.
type Config struct {
	Control            controlapi.Control
	Shards             *shardclient.Client
	Clock              clockwork.Clock
	Logger             *slog.Logger
	PlacementTTL       time.Duration
	PlacementMissTTL   time.Duration
	PlacementCacheSize int
	ShardTimeout       time.Duration
	WriteTimeout       time.Duration // each write of a stream to the client
	BodyLimit          int           // bounds a stream's error answer
	// MaxAnswer bounds a shard's answer (answers.go); default MaxAnswer.
	MaxAnswer int
	// SelfHostedRequests and SelfHostedAnswerBytes are each tenant's
	// budget for its self-hosted nodes (answers.go): requests in flight,
	// long-polls aside, and bytes of their answers held. Defaults
	// DefaultSelfHostedRequests and DefaultSelfHostedAnswerBytes.
	SelfHostedRequests    int
	SelfHostedAnswerBytes int
}

// Proxy sends requests to the shards of their namespaces.
type Proxy struct {
	placements   *placements
	shards       *shardclient.Client
	log          *slog.Logger
	ctx          context.Context // ends when the gateway stops
	shardTimeout time.Duration
	writeTimeout time.Duration
	bodyLimit    int
	maxAnswer    int
	shares       *shares
	calls        sync.WaitGroup        // long-polls' shard calls (longpoll.go)
	runners      *runners.Pool[func()] // the goroutines that make them (longpoll.go)
}

// New builds a proxy; ctx ends the waits of its requests.
func New(ctx context.Context, cfg Config) (*Proxy, error) {
	cache, err := lru.New[placementKey, *placement](cfg.PlacementCacheSize)
	if err != nil {
		return nil, fmt.Errorf("gateway: %w", err)
	}
	orDefault := func(v, def int) int {
		if v <= 0 {
			return def
		}
		return v
	}
	return &Proxy{
		placements: &placements{cache: cache, control: cfg.Control, shards: cfg.Shards, clock: cfg.Clock,
			ttl: cfg.PlacementTTL, missTTL: cfg.PlacementMissTTL, log: cfg.Logger, ctx: ctx},
		shards: cfg.Shards, log: cfg.Logger, ctx: ctx,
		shardTimeout: cfg.ShardTimeout, writeTimeout: cfg.WriteTimeout, bodyLimit: cfg.BodyLimit,
		maxAnswer: orDefault(cfg.MaxAnswer, MaxAnswer),
		shares:    newShares(orDefault(cfg.SelfHostedRequests, DefaultSelfHostedRequests), orDefault(cfg.SelfHostedAnswerBytes, DefaultSelfHostedAnswerBytes)),
		runners:   runners.New(maxIdleRunners, ctx.Done(), func(f func()) { f() }),
	}, nil
}

// Invalidate forgets namespace ns's placement, after the namespace was
// created through this gateway (a cached "no such namespace" must not
// hide it).
func (px *Proxy) Invalidate(tenant, ns string) { px.placements.invalidate(tenant, ns) }

// Forward proxies a request to the shard of its namespace.
func (px *Proxy) Forward(c *fiber.Ctx, r *admitted.Request) error {
	_, err := px.proxy(c, r, 0, false)
	return err
}

// ForwardLongPoll proxies a fetch, whose deadline must outlast the wait
// the worker asked for. A wait out of bounds is refused here, with the
// shard's own rule (wire.FetchWait), before it travels. Jobs the shard
// leased to a worker that went away meanwhile are given back at once
// (releaseIfGone). A fetch still waiting when the gateway stops is
// answered at once with no job (longpoll.go).
func (px *Proxy) ForwardLongPoll(c *fiber.Ctx, r *admitted.Request) error {
	wait, err := fetchWait(c.Request().Body())
	if err != nil {
		return err
	}
	if wait > 0 {
		return px.longPoll(c, r, wait)
	}
	answer, err := px.proxy(c, r, 0, true)
	if err != nil {
		return err
	}
	px.releaseIfGone(c, r, answer)
	return nil
}

// proxy sends the request to the shard's leader with the shard's
// credentials (the client's key never leaves the gateway) and copies the
// answer back. The body goes through untouched and uncopied; of the
// client's headers only the content type does: every other header the
// shard sees is the gateway's (headers.go). Elections
// and moved leaders are ridden out by shardclient.Do, a moving namespace
// by toShard; everything else is the client's answer as it came.
//
// wait is how long a fetch may wait for a job (0 for other requests): the
// shard's deadline outlasts it, and a fetch sent again because its
// namespace moved asks only for what is left of it. The answer is bounded
// and, from a self-hosted shard, held to its tenant's share (answers.go);
// proxy returns its body, valid until the client's response is written.
func (px *Proxy) proxy(c *fiber.Ctx, r *admitted.Request, wait time.Duration, fetch bool) ([]byte, error) {
	req := fasthttp.AcquireRequest()
	resp := fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	body := c.Request().Body()
	shardRequest(c, r, req, body)
	h, err := px.send(r, body, req, resp, wait, fetch)
	if err != nil {
		return nil, err
	}
	return answer(c, r, resp, h), nil
}

// shardRequest makes req the shard's copy of c's request, for r, with
// body (c's, or a copy of it).
func shardRequest(c *fiber.Ctx, r *admitted.Request, req *fasthttp.Request, body []byte) {
	in := &c.Request().Header
	req.Header.SetMethodBytes(in.Method())
	if uri := in.RequestURI(); len(uri) > 0 && uri[0] == '/' {
		req.SetRequestURIBytes(uri) // as received: the path the route matched
	} else {
		req.SetRequestURIBytes(c.Request().URI().RequestURI()) // absolute-form
	}
	req.Header.Set(wire.RequestIDHeader, r.RequestID)
	if r.Scope.Limited {
		req.Header.Set(wire.QueueScopeHeader, r.Scope.Header)
	}
	setPlanHeaders(&req.Header, r, r.CreatesJobs)
	if ct := in.ContentType(); len(ct) > 0 {
		req.Header.SetContentTypeBytes(ct)
	}
	// The W3C trace context an enqueue takes and a creating request's
	// Idempotency-Key (the shard checks them).
	for _, h := range [...]string{wire.TraceParentHeader, wire.TraceStateHeader, wire.IdempotencyKeyHeader} {
		if v := in.Peek(h); len(v) > 0 {
			req.Header.SetBytesV(h, v)
		}
	}
	req.SetBodyRaw(body)
}

// send sends req to the namespace's shard until it has an answer (resp),
// held by the hold it returns; body is the client's, for a fetch sent
// again with what is left of its wait.
func (px *Proxy) send(r *admitted.Request, body []byte, req *fasthttp.Request, resp *fasthttp.Response, wait time.Duration, fetch bool) (*hold, error) {
	start := time.Now()
	var waitEnd time.Time
	if fetch {
		waitEnd = start.Add(wait)
	}
	again := false
	h := px.hold(r, fetch)
	p, err := px.toShard(r, r.NS, waitEnd, func(p *placement) (bool, error) {
		req.Header.Set(wire.ShardNamespaceHeader, p.shardNS)
		left := wait
		if again && fetch {
			left = max(wait-time.Since(start), 0)
			req.SetBody(withFetchTimeout(body, left))
		}
		again = true
		if err := h.do(p, req, resp, time.Now().Add(left+px.shardTimeout)); err != nil {
			return false, err
		}
		return isMoving(resp), nil
	})
	if err != nil {
		_ = h.Close()
		if p == nil {
			return nil, err // no placement
		}
		return nil, px.shardFailure(r.NS, r.RequestID, p, err)
	}
	return h, nil
}

// answer copies the shard's answer to c's response and returns its body;
// r learns how many jobs it leased.
func answer(c *fiber.Ctx, r *admitted.Request, resp *fasthttp.Response, h *hold) []byte {
	out := c.Response()
	out.SetStatusCode(resp.StatusCode())
	out.Header.SetContentTypeBytes(resp.Header.ContentType())
	if ra := resp.Header.Peek(fiber.HeaderRetryAfter); len(ra) > 0 {
		out.Header.SetBytesV(fiber.HeaderRetryAfter, ra)
	}
	if v := resp.Header.Peek(wire.IdempotencyReplayedHeader); len(v) > 0 {
		out.Header.SetBytesV(wire.IdempotencyReplayedHeader, v)
	}
	if v := resp.Header.Peek(wire.WorkerDrainHeader); len(v) > 0 {
		out.Header.SetBytesV(wire.WorkerDrainHeader, v) // a drained worker's fetch
	}
	if n, err := strconv.Atoi(string(resp.Header.Peek(wire.LeasedHeader))); err == nil && n > 0 {
		r.Leased = n // the gateway's own; not passed on
	}
	return h.setBody(out, resp)
}

// shardFailure is the client's answer when no usable answer came from the
// shard of namespace ns. The shard's address stays in the log, never in
// the tenant's error.
func (px *Proxy) shardFailure(ns, requestID string, p *placement, err error) error {
	var ae *apierr.Error
	var f *shardclient.Failure
	switch {
	case errors.Is(err, shardclient.ErrNoLeader):
		return apierr.Retry(apierr.NoLeader, 1, "the shard of namespace %q has no leader right now; retry shortly", ns)
	case errors.As(err, &ae):
		return ae // the tenant's self-hosted share refused it (answers.go), before or while it was read
	case errors.As(err, &f):
		if tl, ok := f.TooLarge(); ok {
			return px.tooLarge(ns, requestID, p, f, tl)
		}
	}
	px.placements.retrySoon(p)
	if errors.As(err, &f) && f.Log {
		px.log.Warn("gateway: shard request failed", "shard", f.Node, "namespace", p.shardNS, "request_id", requestID, "err", f.Err)
	}
	switch {
	case errors.As(err, &f) && f.Overloaded():
		return apierr.Retry(apierr.Unavailable, 1, "the shard of namespace %q is overloaded; retry shortly", ns)
	case errors.As(err, &f) && f.TimedOut():
		return apierr.Retry(apierr.Unavailable, 1, "the shard of namespace %q did not answer in time; retry shortly", ns)
	}
	return apierr.Retry(apierr.Unavailable, 1, "the shard of namespace %q is unreachable; retry shortly", ns)
}

// tooLarge is the client's answer when its shard's answer was over the
// limit: the shard works, so its placement stands.
func (px *Proxy) tooLarge(ns, requestID string, p *placement, f *shardclient.Failure, tl *shardclient.AnswerTooLargeError) error {
	answersRefused.WithLabelValues("too_large").Inc()
	if f.Log {
		px.log.Warn("gateway: a shard's answer was over the limit; refused", "shard", f.Node, "namespace", p.shardNS,
			"request_id", requestID, "limit", tl.Limit, "stated", tl.Stated)
	}
	return apierr.New(apierr.ShardAnswerTooLarge,
		"the answer of namespace %q's shard is over %d bytes (%d MiB), the most the gateway passes on; ask for fewer jobs at once (limit, max)",
		ns, tl.Limit, tl.Limit>>20)
}

// fetchWait is the long-poll wait a fetch body asks for ("timeout", in
// seconds), or the 400 the shard would answer. A body that does not
// decode gets the default: the shard refuses it with its own 400. Every
// fetch pays this, so it decodes as the shard does (goccy/go-json, about
// a seventh of encoding/json's time here).
func fetchWait(body []byte) (time.Duration, error) {
	var f struct {
		Timeout *float64 `json:"timeout"`
	}
	if gojson.Unmarshal(body, &f) != nil {
		return wire.DefaultFetchTimeout, nil
	}
	d, err := wire.FetchWait(f.Timeout)
	if err != nil {
		return 0, apierr.Field("timeout", "%v", err)
	}
	return d, nil
}

// withFetchTimeout is a fetch body that asks to wait for wait instead of
// what it asked for. A body that does not decode goes as it is: the shard
// refuses it. Only a fetch sent again builds one.
func withFetchTimeout(body []byte, wait time.Duration) []byte {
	var f map[string]json.RawMessage
	if json.Unmarshal(body, &f) != nil || f == nil {
		return body
	}
	f["timeout"] = strconv.AppendFloat(nil, wait.Seconds(), 'f', 3, 64)
	out, err := json.Marshal(f)
	if err != nil {
		return body
	}
	return out
}

package limits

import (
	"math"
	"strconv"
	"sync"
	"time"

	gojson "github.com/goccy/go-json"
	"github.com/gofiber/fiber/v2"

	"github.com/jobbie/jobbie/gateway/admitted"
	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/wire"
)

// Rate limits: a plan's requests_per_second (every /api/v1 request) and
// enqueues_per_second (jobs enqueued: an enqueue/batch of n counts n) per
// tenant, on all gateways together. Each gateway holds one token bucket
// per limit and tenant (bucket.go: burst one second of its
// rate) filling at its share of the limit; the gateways divide each limit
// among themselves by their recent demand (sync.go).
//
// A request is checked after it is authorized, so neither an anonymous
// nor a forbidden request spends a tenant's quota. A refused one gets 429
// rate_limited with Retry-After; every answer to a tenant with limits,
// admitted or refused, carries the IETF fields
// (draft-ietf-httpapi-ratelimit-headers-11: structured-field lists), one
// item per limit:
//
//	RateLimit-Policy: "rps";q=200;w=1, "eps";q=1000;w=1
//	RateLimit: "rps";r=57;t=1, "eps";r=1000;t=0
//
// q is the plan's limit and w its window (1 s); r is what this gateway
// would still admit at once (its share of the tenant's limit), t the
// seconds until its bucket is full again, or on a refusal the limit's
// Retry-After.

// Policy names in the RateLimit fields.
const (
	policyRequests = "rps"
	policyEnqueues = "eps"
)

// maxRetryAfter bounds Retry-After: shares and plans move long before a
// bucket in deep debt would refill.
const maxRetryAfter = 60

// tenantRates are one tenant's rate limits on this gateway.
type tenantRates struct {
	rps, eps *rateLimiter // nil when the plan sets no such limit
	policy   string       // the RateLimit-Policy value
}

// rateLimiter is one limit of one tenant on this gateway.
type rateLimiter struct {
	name   string  // the plan's name of the limit
	policy string  // its name in the RateLimit fields
	what   string  // what it counts, for the refusal's message
	limit  float64 // the tenant's, all gateways together

	mu         sync.Mutex
	b          bucket       // fills at this gateway's share of limit
	demand     demandWindow // what was asked of it lately (sync.go)
	lastDemand float64      // the window's rate at the last sync
	admitted   float64      // units passed since the limiter was made

	newcomerUntil time.Time // set once: until then its share is capped (sync.go)
}

func newRateLimiter(name, policy, what string, limit int64, share float64, now time.Time) *rateLimiter {
	return &rateLimiter{name: name, policy: policy, what: what, limit: float64(limit),
		b: newBucket(share, now), demand: demandWindow{since: now}}
}

// take takes n tokens if it can, and counts them as asked either way. It
// answers what the RateLimit field shows of the limit, and on a refusal
// how long until n could pass.
func (l *rateLimiter) take(now time.Time, n float64) (ok bool, wait time.Duration, r int64, full time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.demand.seen += n
	if ok, wait = l.b.take(now, n); ok {
		l.admitted += n
	}
	return ok, wait, l.b.remaining(), l.b.untilFull()
}

// peek is what the RateLimit field shows of the limit, taking nothing.
func (l *rateLimiter) peek(now time.Time) (int64, time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.b.fill(now)
	return l.b.remaining(), l.b.untilFull()
}

// asked counts n as asked of the limit, for a request another limit
// refused.
func (l *rateLimiter) asked(n float64) {
	l.mu.Lock()
	l.demand.seen += n
	l.mu.Unlock()
}

func (l *rateLimiter) giveBack(n float64) {
	l.mu.Lock()
	l.b.giveBack(n)
	l.admitted -= n
	l.mu.Unlock()
}

// Limit applies the tenant's rate limits to an authorized request, and
// gives r its plan's shard headers; jobs is what the request counts
// against enqueues_per_second. A tenant without limits pays one map
// lookup.
func (pc *Plans) Limit(c *fiber.Ctx, r *admitted.Request, jobs Enqueues) error {
	e := pc.entry(r.Key.TenantID)
	r.Plan = &e.shard
	tr := e.rates.Load()
	if tr == fetching {
		tr = pc.await(e)
	}
	if tr == nil {
		return nil
	}
	return tr.admit(c, jobs, pc.clock.Now())
}

// admit takes a request's tokens from every limit it counts against, or
// none, and writes the RateLimit fields.
func (tr *tenantRates) admit(c *fiber.Ctx, enq Enqueues, now time.Time) error {
	var rps, eps item
	if tr.rps != nil {
		rps = tr.rps.takeItem(now, 1)
	}
	if tr.eps != nil {
		switch jobs := enq.count(c.Request().Body()); {
		case jobs > 0 && rps.refused():
			tr.eps.asked(jobs)
			eps = tr.eps.peekItem(now)
		case jobs > 0:
			if eps = tr.eps.takeItem(now, jobs); eps.refused() && tr.rps != nil {
				tr.rps.giveBack(1) // the request did not pass after all
				rps = tr.rps.peekItem(now)
			}
		default:
			eps = tr.eps.peekItem(now)
		}
	}
	var field [128]byte
	out := rps.append(field[:0])
	out = eps.append(out)
	h := &c.Response().Header
	h.Set(wire.RateLimitPolicyHeader, tr.policy)
	h.SetBytesV(wire.RateLimitHeader, out)
	over := rps
	if !rps.refused() {
		over = eps
	}
	if !over.refused() {
		return nil
	}
	refusedTotal.WithLabelValues(over.l.name).Inc()
	secs := retryAfter(over.wait)
	return apierr.Retry(apierr.RateLimited, secs,
		"rate limit exceeded: this tenant's plan allows %s %s per second (%s) on all gateways together; retry after %d s",
		strconv.FormatFloat(over.l.limit, 'f', -1, 64), over.l.what, over.l.name, secs)
}

// item is what a request did to one limit: whether it passed and what
// the RateLimit field shows; zero for a limit the tenant does not have.
type item struct {
	l    *rateLimiter
	ok   bool
	wait time.Duration // on a refusal, until the request could pass
	r    int64
	full time.Duration
}

func (it item) refused() bool { return it.l != nil && !it.ok }

func (l *rateLimiter) takeItem(now time.Time, n float64) item {
	ok, wait, r, full := l.take(now, n)
	return item{l: l, ok: ok, wait: wait, r: r, full: full}
}

func (l *rateLimiter) peekItem(now time.Time) item {
	r, full := l.peek(now)
	return item{l: l, ok: true, r: r, full: full}
}

// append appends the limit's item of the RateLimit field: on a refusal
// no quota left, for as long as Retry-After says.
func (it item) append(out []byte) []byte {
	if it.l == nil {
		return out
	}
	r, t := it.r, seconds(it.full)
	if !it.ok {
		r, t = 0, int64(retryAfter(it.wait))
	}
	if len(out) > 0 {
		out = append(out, ", "...)
	}
	out = append(out, '"')
	out = append(out, it.l.policy...)
	out = append(out, `";r=`...)
	out = strconv.AppendInt(out, r, 10)
	out = append(out, ";t="...)
	return strconv.AppendInt(out, t, 10)
}

// seconds rounds d up to whole seconds, as the fields count.
func seconds(d time.Duration) int64 {
	if d >= maxRetryAfter*time.Second {
		return maxRetryAfter
	}
	return int64(math.Ceil(d.Seconds()))
}

// retryAfter is Retry-After for a wait: whole seconds, at least 1.
func retryAfter(wait time.Duration) int { return int(max(1, seconds(wait))) }

// Enqueues is what a route counts against enqueues_per_second.
type Enqueues uint8

const (
	NoJobs      Enqueues = iota
	OneJob               // an enqueue: 1
	BatchOfJobs          // an enqueue/batch: its jobs
)

// count is how many jobs a request with body enqueues.
func (e Enqueues) count(body []byte) float64 {
	switch e {
	case OneJob:
		return 1
	case BatchOfJobs:
		return float64(batchJobs(body))
	}
	return 0
}

// batchJobs counts the jobs of an enqueue/batch body without keeping
// them. A body that does not decode, or names none, counts 1: the shard
// refuses it, but it is not free.
func batchJobs(body []byte) int {
	var b struct {
		Jobs []struct{} `json:"jobs"`
	}
	if gojson.Unmarshal(body, &b) != nil || len(b.Jobs) == 0 {
		return 1
	}
	return len(b.Jobs)
}

// policyField is the RateLimit-Policy value of a tenant's limits.
func policyField(rps, eps *rateLimiter) string {
	var out []byte
	for _, l := range []*rateLimiter{rps, eps} {
		if l == nil {
			continue
		}
		if len(out) > 0 {
			out = append(out, ", "...)
		}
		out = append(out, '"')
		out = append(out, l.policy...)
		out = append(out, `";q=`...)
		out = strconv.AppendInt(out, int64(l.limit), 10)
		out = append(out, ";w=1"...)
	}
	return string(out)
}

// Flow is what tenant tid's requests_per_second limiter on this gateway
// has let through since it was made (admitted), and that plus the tokens
// it holds at now (flow): what flowed into its bucket, this gateway's
// share of the limit summed over time. It measures a limit where
// requests are admitted; zero for a tenant without one.
func (pc *Plans) Flow(tid string, now time.Time) (admitted, flow float64) {
	v, ok := pc.entries.Load(tid)
	if !ok {
		return 0, 0
	}
	tr := v.(*planEntry).rates.Load()
	if tr == nil || tr.rps == nil {
		return 0, 0
	}
	l := tr.rps
	l.mu.Lock()
	defer l.mu.Unlock()
	l.b.fill(now)
	return l.admitted, l.admitted + l.b.tokens
}

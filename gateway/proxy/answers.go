package proxy

import (
	"bytes"
	"context"
	"io"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/valyala/fasthttp"

	"github.com/jobbie/jobbie/gateway/admitted"
	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/obs"
	"github.com/jobbie/jobbie/internal/shardclient"
)

// What a shard's answer may cost the gateway. An answer is held whole
// until it is written to the client, so a node (a tenant's own,
// self-hosted one above all) could otherwise fill the gateway's memory.
//
// Every answer is bounded by MaxAnswer. The largest answers the API gives
// are pages of jobs (search, the dead letter list, fetch/batch: at most
// 1,000 jobs, wire.MaxSearchLimit, MaxDeadLimit, MaxFetchBatch) and the
// answer to an enqueue/batch of 1,000; MaxAnswer holds such a page at
// 32 KiB a job, twice the 16 MiB of the largest request the gateway takes
// (an enqueue/batch, Config.BatchBodyLimit). What must be larger is
// streamed, never held: the event stream (stream.go), backups and their
// downloads (through control). An answer over it is refused as soon as
// that is known, is not asked for again, and is the client's 502
// shard_answer_too_large naming the limit: ask for fewer jobs at once.
//
// A tenant's self-hosted nodes also share a budget of their own (shares
// below): the requests in flight to them (long-polls aside: they have
// Config.MaxLongPollsPerTenant) and the bytes of their answers held at
// once. Over it, that tenant's next request is a 503 self_hosted_budget
// with Retry-After (an answer of stated length first waits for room, up
// to its request's deadline); no other tenant's is affected.
const (
	MaxAnswer = 32 << 20
	// DefaultSelfHostedRequests is Config.SelfHostedRequests' default.
	DefaultSelfHostedRequests = 256
	// DefaultSelfHostedAnswerBytes is Config.SelfHostedAnswerBytes'
	// default: two answers at MaxAnswer.
	DefaultSelfHostedAnswerBytes = 2 * MaxAnswer
)

var (
	answersRefused = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "jobbie_gateway_shard_answers_refused_total",
		Help: "Shard answers refused: over the most the gateway passes on (too_large), or over the budget of the tenant's self-hosted nodes (self_hosted_budget).",
	}, []string{"reason"})
	selfHostedHeld = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "jobbie_gateway_self_hosted_answer_bytes",
		Help: "Bytes of self-hosted nodes' answers the gateway holds now, every tenant's together.",
	})
)

func init() { obs.Registry.MustRegister(answersRefused, selfHostedHeld) }

// shares holds each tenant's self-hosted nodes to their budget.
type shares struct {
	maxRequests, maxBytes int
	mu                    sync.Mutex
	use                   map[string]*use // by tenant; gone when nothing is in flight
}

// use is a tenant's in flight: its shares (long-polls too), the request
// slots they hold, and their bytes; freed is closed (and replaced) when
// bytes are given back, for the answers waiting for room.
type use struct {
	shares, requests, bytes int
	waiting                 int // answers waiting for room
	freed                   chan struct{}
}

// share is one request's part of its tenant's budget: a shardclient
// Budget for its answer's buffer, and its request slot.
type share struct {
	s        *shares
	tenant   string
	counted  bool            // holds a request slot
	held     int             // bytes this share holds
	ctx      context.Context // ends the wait for room with the gateway
	deadline time.Time       // the request's: ends the wait for room
}

func newShares(maxRequests, maxBytes int) *shares {
	return &shares{maxRequests: maxRequests, maxBytes: maxBytes, use: map[string]*use{}}
}

// acquire takes a request slot of tenant's (count) or none (a long-poll).
func (s *shares) acquire(tenant string, count bool) (*share, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	u := s.use[tenant]
	if u == nil {
		u = &use{freed: make(chan struct{})}
		s.use[tenant] = u
	}
	if count {
		if u.requests >= s.maxRequests {
			s.forget(tenant, u)
			return nil, overBudget("requests in flight", s.maxRequests)
		}
		u.requests++
	}
	u.shares++
	return &share{s: s, tenant: tenant, counted: count}, nil
}

// forget drops an idle tenant's entry, so the map holds only tenants
// with something in flight. Called with s.mu held.
func (s *shares) forget(tenant string, u *use) {
	if u.shares == 0 && u.bytes == 0 {
		delete(s.use, tenant)
	}
}

func overBudget(what string, limit int) error {
	answersRefused.WithLabelValues("self_hosted_budget").Inc()
	return apierr.Retry(apierr.SelfHostedBudget, 1,
		"this tenant's self-hosted nodes have the most %s this gateway gives them (%d); retry shortly", what, limit)
}

// Take charges n bytes of an answer's buffer. An answer that holds
// nothing yet waits for room, until its request's deadline: a node that
// states its answer's length (as shards do) takes it in one piece, so a
// burst of answers is queued rather than refused. One that holds bytes
// and needs more (an answer of unstated length, growing) is refused at
// once: the answers that hold bytes never wait, so they always end and
// give them back, and the waiting ones hold nothing.
func (sh *share) Take(n int) error {
	s := sh.s
	s.mu.Lock()
	defer s.mu.Unlock()
	for {
		u := s.use[sh.tenant] // present: this share is in flight
		if u.bytes+n <= s.maxBytes {
			u.bytes += n
			sh.held += n
			selfHostedHeld.Add(float64(n))
			return nil
		}
		if sh.held > 0 || n > s.maxBytes || !sh.wait(u) {
			return overBudget("answer bytes held", s.maxBytes)
		}
	}
}

// wait waits, with s.mu released, for u's bytes to be given back; false
// when the request's deadline passed or the gateway stops first.
func (sh *share) wait(u *use) bool {
	left := time.Until(sh.deadline)
	if left <= 0 {
		return false
	}
	freed := u.freed
	u.waiting++
	sh.s.mu.Unlock()
	t := time.NewTimer(left)
	defer t.Stop()
	ok := false
	select {
	case <-freed:
		ok = true
	case <-t.C:
	case <-sh.ctx.Done():
	}
	sh.s.mu.Lock()
	u.waiting--
	return ok
}

// Give returns n bytes.
func (sh *share) Give(n int) {
	s := sh.s
	s.mu.Lock()
	defer s.mu.Unlock()
	u := s.use[sh.tenant]
	u.bytes -= n
	sh.held -= n
	selfHostedHeld.Sub(float64(n))
	close(u.freed)
	u.freed = make(chan struct{})
}

// done gives the request slot back, once its answer's bytes are.
func (sh *share) done() {
	s := sh.s
	s.mu.Lock()
	defer s.mu.Unlock()
	u := s.use[sh.tenant]
	if sh.counted {
		u.requests--
	}
	u.shares--
	s.forget(sh.tenant, u)
}

// hold is one client request's answer from its shard: bounded by
// MaxAnswer, and, on a self-hosted shard, charged to its tenant's share
// until it is written to the client (or dropped). Close releases it.
type hold struct {
	px     *Proxy
	tenant string
	count  bool // takes a request slot (every request but a long-poll)
	ans    shardclient.Answer
	share  *share
	once   sync.Once
}

func (px *Proxy) hold(r *admitted.Request, longPoll bool) *hold {
	return &hold{px: px, tenant: r.Key.TenantID, count: !longPoll, ans: shardclient.Answer{Max: px.maxAnswer}}
}

// do sends one attempt to p's shard: a self-hosted one's first takes the
// tenant's share.
func (h *hold) do(p *placement, req *fasthttp.Request, resp *fasthttp.Response, deadline time.Time) error {
	if h.share == nil && h.px.shards.Owner(p.route) != "" {
		sh, err := h.px.shares.acquire(h.tenant, h.count)
		if err != nil {
			return err
		}
		sh.ctx = h.px.ctx
		h.share, h.ans.Budget = sh, sh
	}
	if h.share != nil {
		h.share.deadline = deadline
	}
	return h.px.shards.DoAnswer(p.route, req, resp, deadline, &h.ans)
}

// Close gives the answer's bytes and the request's slot back.
func (h *hold) Close() error {
	h.once.Do(func() {
		h.ans.Release()
		if h.share != nil {
			h.share.done()
		}
	})
	return nil
}

// setBody makes resp's answer the client's body, and returns it. An answer
// in a buffer of its own is handed over as is, and h released once it is
// written (or the client is gone); one read in place is copied, and h
// released at once.
func (h *hold) setBody(out *fasthttp.Response, resp *fasthttp.Response) []byte {
	body, owned := h.ans.Owned()
	if !owned {
		out.SetBody(resp.Body())
		_ = h.Close()
		return out.Body()
	}
	out.SetBodyStream(&heldBody{Reader: bytes.NewReader(body), h: h}, len(body))
	return body
}

// heldBody is an answer fasthttp writes to the client and then closes.
type heldBody struct {
	*bytes.Reader
	h *hold
}

func (b *heldBody) Close() error { return b.h.Close() }

var _ io.ReadCloser = (*heldBody)(nil)

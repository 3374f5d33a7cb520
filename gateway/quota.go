package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/jonboulle/clockwork"
	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sync/singleflight"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/obs"
	"github.com/jobbie/jobbie/wire"
)

// Quotas of a tenant's plan that the gateway enforces itself:
//
//   - max_payload_bytes: an enqueue (or a job of enqueue/batch) whose
//     payload's JSON is longer is refused with 413 too_large naming the
//     field, the limit and the plan. A payload too large is a body
//     problem that waiting does not fix, so not a 429.
//   - monthly_executions, "hard": once the UTC month's executions reach
//     the cap, fetch and fetch/batch are refused with 429 quota_exceeded
//     and Retry-After up to the next month. "soft": nothing is refused; a
//     counter and a gauge move, and the gateway logs it once per tenant
//     and month.
//
// The limits are the plan in effect as the gateway's plan cache has it
// (limits.go). The month's executions under a cap come from control's GET
// /internal/v1/tenants/{tid}/quota (the ledger's count), read at most
// every quotaRefresh per tenant and only for tenants whose plan has a
// cap: a tenant's first fetch waits up to quotaFirstWait for it, later
// ones use what is cached while a refresh runs. They are the ledger's,
// so behind the work by the metering lag: a hard cap stops fetches
// within a few seconds of being reached, not at the exact execution.
// While control cannot be reached the last answer stays in force; a
// tenant whose plan or count was never read is not limited.
// max_schedules is counted on the shards (schedquota.go); the shard
// itself enforces max_pending_jobs, which the gateway sends it
// (shardheaders.go).

const (
	quotaRefresh   = 5 * time.Second
	quotaFirstWait = time.Second
	quotaPath      = "/quota"
	// maxQuotaEntries bounds the tenants cached at once.
	maxQuotaEntries = 100_000
)

var (
	quotaRefusedTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "jobbie_gateway_quota_refused_total", Help: "Requests refused by a plan's quota, by limit.",
	}, []string{"limit"})
	softQuotaExceeded = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "jobbie_gateway_soft_quota_exceeded_total",
		Help: "Fetches admitted while their tenant was over a soft monthly execution cap.",
	})
	softQuotaTenants = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "jobbie_gateway_soft_quota_tenants", Help: "Tenants seen over their soft monthly execution cap this month.",
	})
)

func init() { obs.Registry.MustRegister(quotaRefusedTotal, softQuotaExceeded, softQuotaTenants) }

// quotaCache holds each tenant's last quota answer.
type quotaCache struct {
	control *controlClient
	clock   clockwork.Clock
	timeout time.Duration
	log     *slog.Logger
	fetches singleflight.Group

	mu      sync.Mutex
	entries map[string]*quotaEntry
	warned  map[string]string // tenant → the month its soft cap was logged
}

type quotaEntry struct {
	q       *wire.TenantQuota // nil until control answered; the answer of a tenant with no plan is empty limits
	fetched time.Time         // of the last attempt
}

func newQuotaCache(cc *controlClient, cfg Config) *quotaCache {
	return &quotaCache{control: cc, clock: cfg.Clock, timeout: cfg.ControlTimeout, log: cfg.Logger,
		entries: map[string]*quotaEntry{}, warned: map[string]string{}}
}

// get is tenant tid's quota, or nil when none is known.
func (qc *quotaCache) get(tid string) *wire.TenantQuota {
	now := qc.clock.Now()
	qc.mu.Lock()
	var known *wire.TenantQuota
	var fetched time.Time
	e, ok := qc.entries[tid]
	if ok {
		known, fetched = e.q, e.fetched // fetch writes them under the lock
	}
	qc.mu.Unlock()
	if ok && now.Sub(fetched) < quotaRefresh {
		return known
	}
	ch := qc.fetches.DoChan(tid, func() (any, error) { return nil, qc.fetch(tid) })
	if known != nil {
		return known // stale while it refreshes
	}
	t := time.NewTimer(quotaFirstWait) // a network wait: the wall clock's
	defer t.Stop()
	select {
	case <-ch:
	case <-t.C:
	}
	qc.mu.Lock()
	defer qc.mu.Unlock()
	if e := qc.entries[tid]; e != nil {
		return e.q
	}
	return nil
}

// fetch asks control; a failure keeps the last answer and is retried
// after quotaRefresh.
func (qc *quotaCache) fetch(tid string) error {
	ctx, cancel := context.WithTimeout(context.Background(), qc.timeout)
	defer cancel()
	var q wire.TenantQuota
	err := qc.control.getJSON(ctx, tenantPath(tid, quotaPath), "", &q)
	var se *statusError
	if errors.As(err, &se) && se.status == http.StatusNotFound {
		q, err = wire.TenantQuota{TenantID: tid}, nil // a control that knows no quota of the tenant: none, cached like one
	}
	qc.mu.Lock()
	defer qc.mu.Unlock()
	e := qc.entries[tid]
	if e == nil {
		if len(qc.entries) >= maxQuotaEntries {
			// Bounded memory over many tenants: forgetting costs each one
			// a fetch, no more.
			clear(qc.entries)
		}
		e = &quotaEntry{}
		qc.entries[tid] = e
	}
	e.fetched = qc.clock.Now()
	if err != nil {
		qc.log.Warn("gateway: could not read a tenant's quota from control; the last one known stays", "tenant", tid, "err", err)
		return err
	}
	e.q = &q
	return nil
}

// softOnce reports whether tenant tid's soft cap of month was not yet
// logged, and marks it.
func (qc *quotaCache) softOnce(tid string, month time.Time) bool {
	m := month.Format("2006-01")
	qc.mu.Lock()
	defer qc.mu.Unlock()
	if qc.warned[tid] == m {
		return false
	}
	if _, seen := qc.warned[tid]; !seen {
		softQuotaTenants.Inc()
	}
	qc.warned[tid] = m
	return true
}

// Endpoints that check a quota before they are proxied.
var (
	proxiedEnqueue      = endpoint{handle: (*Server).enqueueChecked, queues: true, createsJobs: true}
	proxiedEnqueueBatch = endpoint{handle: (*Server).enqueueBatchChecked, batchBody: true, queues: true, createsJobs: true}
	proxiedFetch        = endpoint{handle: (*Server).fetchChecked, queues: true}
)

func (s *Server) enqueueChecked(c *fiber.Ctx, r *call) error {
	if err := s.checkPayloads(c, r, false); err != nil {
		return err
	}
	return s.forward(c, r)
}

func (s *Server) enqueueBatchChecked(c *fiber.Ctx, r *call) error {
	if err := s.checkPayloads(c, r, true); err != nil {
		return err
	}
	return s.forward(c, r)
}

func (s *Server) fetchChecked(c *fiber.Ctx, r *call) error {
	if err := s.checkExecutions(r); err != nil {
		return err
	}
	return proxiedLongPoll.handle(s, c, r)
}

// checkPayloads refuses a job whose payload is over the plan's
// max_payload_bytes. A body no longer than the limit holds no such job,
// so only larger bodies are decoded; one that does not decode is left
// to the shard to refuse.
func (s *Server) checkPayloads(c *fiber.Ctx, r *call, batch bool) error {
	tp, ok := s.tenantPlan(r.key.TenantID)
	if !ok || tp.Plan.Limits.MaxPayloadBytes == nil {
		return nil
	}
	limit := *tp.Plan.Limits.MaxPayloadBytes
	body := c.Body()
	if int64(len(body)) <= limit {
		return nil
	}
	type job struct {
		Payload json.RawMessage `json:"payload"`
	}
	var jobs []job
	if batch {
		var b struct {
			Jobs []job `json:"jobs"`
		}
		if json.Unmarshal(body, &b) != nil {
			return nil
		}
		jobs = b.Jobs
	} else {
		var j job
		if json.Unmarshal(body, &j) != nil {
			return nil
		}
		jobs = []job{j}
	}
	for i, j := range jobs {
		if n := int64(len(j.Payload)); n > limit {
			field := "payload"
			if batch {
				field = fmt.Sprintf("jobs[%d].payload", i)
			}
			quotaRefusedTotal.WithLabelValues("max_payload_bytes").Inc()
			return apierr.OfField(apierr.TooLarge, field, "the payload is %d bytes, over the max_payload_bytes limit of %d of plan %q", n, limit, tp.Plan.Name)
		}
	}
	return nil
}

// checkExecutions refuses a fetch while the tenant's month is at its
// hard execution cap; over a soft cap it only counts and logs.
func (s *Server) checkExecutions(r *call) error {
	tp, ok := s.tenantPlan(r.key.TenantID)
	if !ok || tp.Plan.Limits.MonthlyExecutions == nil {
		return nil
	}
	cap := *tp.Plan.Limits.MonthlyExecutions
	q := s.control.quotas.get(r.key.TenantID)
	now := s.cfg.Clock.Now().UTC()
	if q == nil || !q.Month.Equal(monthOf(now)) || q.Executions < cap {
		return nil // a new month starts at 0, whatever the last answer said
	}
	if !strings.EqualFold(tp.Plan.Limits.MonthlyExecutionsEnforcement, "soft") {
		quotaRefusedTotal.WithLabelValues("monthly_executions").Inc()
		next := monthOf(now).AddDate(0, 1, 0)
		secs := int(next.Sub(now).Round(time.Second) / time.Second)
		return apierr.Retry(apierr.QuotaExceeded, max(secs, 1), "the monthly_executions limit of %d of plan %q is reached (%d this month); fetches resume %s",
			cap, tp.Plan.Name, q.Executions, next.Format(time.RFC3339))
	}
	softQuotaExceeded.Inc()
	if s.control.quotas.softOnce(r.key.TenantID, q.Month) {
		s.log.Warn("gateway: tenant over its soft monthly execution cap", "tenant", r.key.TenantID, "plan", tp.Plan.Name,
			"limit", cap, "executions", q.Executions, "month", q.Month.Format("2006-01"))
	}
	return nil
}

func monthOf(t time.Time) time.Time {
	y, m, _ := t.UTC().Date()
	return time.Date(y, m, 1, 0, 0, 0, 0, time.UTC)
}

package limits

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/jonboulle/clockwork"
	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sync/singleflight"

	"github.com/jobbie/jobbie/gateway/admitted"
	"github.com/jobbie/jobbie/gateway/controlapi"
	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/obs"
	"github.com/jobbie/jobbie/wire"
)

// Quotas of a tenant's plan that the gateway enforces itself:
//
//   - max_payload_bytes: an enqueue (or a job of enqueue/batch) whose
//     payload's JSON is longer is refused with 413 too_large naming the
//     field, the limit and the plan. A payload too large is a body
//     problem that waiting does not fix, so not a 429. This is only the
//     early refusal of the commonest case: the shard checks every value
//     it stores against the limit the gateway sends it (shardheaders.go).
//   - monthly_executions, "hard": once the UTC month's executions reach
//     the cap, fetch and fetch/batch are refused with 429 quota_exceeded
//     and Retry-After up to the next month. "soft": nothing is refused; a
//     counter and a gauge move, and the gateway logs it once per tenant
//     and month. Below a hard cap, a fetch carries the executions left
//     to the shard (Request.ExecutionsLeft), which leases no more, and
//     the jobs the shards answer they leased count at once on this
//     gateway (Leased): the month's count is the ledger's or, when
//     larger, the ledger's first reading this month plus what this
//     gateway leased since, so fetches through one gateway stop at the
//     cap without waiting for the metering lag (but for the lag of that
//     first reading); other gateways' leases count once in the ledger.
//
// The limits are the plan in effect as the gateway's plan cache has it
// (plans.go). The month's executions under a cap come from control's
// TenantQuota (the ledger's count), read at most
// every QuotaRefresh per tenant and only for tenants whose plan has a
// cap: a tenant's first fetch waits up to quotaFirstWait for it, later
// ones use what is cached while a refresh runs. They are the ledger's,
// so behind the work by the metering lag: a hard cap stops fetches
// within a few seconds of being reached, not at the exact execution.
// While control cannot be reached the last answer stays in force; a
// tenant whose plan or count was never read is not limited.
// max_schedules is counted on the shards (schedules.go); the shard
// itself enforces max_pending_jobs, which the gateway sends it
// (shardheaders.go).

const (
	// QuotaRefresh is how long a tenant's quota is used before control is
	// asked again.
	QuotaRefresh   = 5 * time.Second
	quotaFirstWait = time.Second
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

// Quotas enforces the plans' quotas; it holds each tenant's last quota
// answer.
type Quotas struct {
	control controlapi.Control
	plans   *Plans
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
	// The month's executions as this gateway saw them start: the
	// ledger's count when it first read it this month (base), and the
	// jobs leased through this gateway since (leased, from the shards'
	// answers). The ledger trails the work by the metering lag, so
	// base+leased is the closer count until the ledger passes it.
	month        time.Time
	base, leased int64
}

// NewQuotas enforces the quotas of plans.
func NewQuotas(plans *Plans, cfg Config) *Quotas {
	return &Quotas{control: cfg.Control, plans: plans, clock: cfg.Clock, timeout: cfg.ControlTimeout, log: cfg.Logger,
		entries: map[string]*quotaEntry{}, warned: map[string]string{}}
}

// get is tenant tid's quota, or nil when none is known.
func (qc *Quotas) get(tid string) *wire.TenantQuota {
	now := qc.clock.Now()
	qc.mu.Lock()
	var known *wire.TenantQuota
	var fetched time.Time
	e, ok := qc.entries[tid]
	if ok {
		known, fetched = e.q, e.fetched // fetch writes them under the lock
	}
	qc.mu.Unlock()
	if ok && now.Sub(fetched) < QuotaRefresh {
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
// after QuotaRefresh.
func (qc *Quotas) fetch(tid string) error {
	ctx, cancel := context.WithTimeout(qc.plans.ctx, qc.timeout) // ends when the gateway stops
	defer cancel()
	q, err := qc.control.TenantQuota(ctx, tid)
	if controlapi.NotFound(err) {
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
	if err == nil && (e.q == nil || !e.month.Equal(q.Month)) {
		e.month, e.base, e.leased = q.Month, q.Executions, 0
	}
	if err != nil {
		if qc.plans.ctx.Err() == nil {
			qc.log.Warn("gateway: could not read a tenant's quota from control; the last one known stays", "tenant", tid, "err", err)
		}
		return err
	}
	e.q = &q
	return nil
}

// executions is tenant tid's count of the month q counts: the ledger's,
// or what this gateway saw start since it first read it, the larger.
func (qc *Quotas) executions(tid string, q *wire.TenantQuota) int64 {
	qc.mu.Lock()
	defer qc.mu.Unlock()
	if e := qc.entries[tid]; e != nil && e.month.Equal(q.Month) {
		return max(q.Executions, e.base+e.leased)
	}
	return q.Executions
}

// Leased counts the jobs r's answer leased (a fetch's), for a tenant
// whose month this gateway counts.
func (qc *Quotas) Leased(r *admitted.Request) {
	if r.Leased <= 0 || r.ExecutionsLeft <= 0 {
		return // no hard cap, or nothing leased
	}
	month := monthOf(qc.clock.Now())
	qc.mu.Lock()
	defer qc.mu.Unlock()
	if e := qc.entries[r.Key.TenantID]; e != nil && e.month.Equal(month) {
		e.leased += int64(r.Leased)
	}
}

// SoftOnce reports whether tenant tid's soft cap of month was not yet
// logged, and marks it.
func (qc *Quotas) SoftOnce(tid string, month time.Time) bool {
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

// Await waits for a quota fetch of tenant tid under way, if any, to be
// stored.
func (qc *Quotas) Await(tid string) {
	_, _, _ = qc.fetches.Do(tid, func() (any, error) { return nil, nil })
}

// CheckPayloads refuses a job whose payload is over the plan's
// max_payload_bytes. A body no longer than the limit holds no such job,
// so only larger bodies are decoded; one that does not decode is left
// to the shard to refuse.
func (qc *Quotas) CheckPayloads(c *fiber.Ctx, r *admitted.Request, batch bool) error {
	tp, ok := qc.plans.TenantPlan(r.Key.TenantID)
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

// CheckExecutions refuses a fetch while the tenant's month is at its
// hard execution cap; over a soft cap it only counts and logs.
func (qc *Quotas) CheckExecutions(r *admitted.Request) error {
	tp, ok := qc.plans.TenantPlan(r.Key.TenantID)
	if !ok || tp.Plan.Limits.MonthlyExecutions == nil {
		return nil
	}
	cap := *tp.Plan.Limits.MonthlyExecutions
	q := qc.get(r.Key.TenantID)
	now := qc.clock.Now().UTC()
	hard := !strings.EqualFold(tp.Plan.Limits.MonthlyExecutionsEnforcement, "soft")
	done := int64(0)
	if q != nil && q.Month.Equal(monthOf(now)) {
		done = qc.executions(r.Key.TenantID, q)
	}
	if q == nil || !q.Month.Equal(monthOf(now)) || done < cap {
		if hard && cap > 0 {
			// The shard leases no more than this (a fetch/batch asks for
			// up to 1000): a new month, or a count not read yet, has the
			// whole cap left.
			r.ExecutionsLeft = cap - done
		}
		return nil // a new month starts at 0, whatever the last answer said
	}
	if hard {
		quotaRefusedTotal.WithLabelValues("monthly_executions").Inc()
		next := monthOf(now).AddDate(0, 1, 0)
		secs := int(next.Sub(now).Round(time.Second) / time.Second)
		return apierr.Retry(apierr.QuotaExceeded, max(secs, 1), "the monthly_executions limit of %d of plan %q is reached (%d this month); fetches resume %s",
			cap, tp.Plan.Name, done, next.Format(time.RFC3339))
	}
	softQuotaExceeded.Inc()
	if qc.SoftOnce(r.Key.TenantID, q.Month) {
		qc.log.Warn("gateway: tenant over its soft monthly execution cap", "tenant", r.Key.TenantID, "plan", tp.Plan.Name,
			"limit", cap, "executions", q.Executions, "month", q.Month.Format("2006-01"))
	}
	return nil
}

func monthOf(t time.Time) time.Time {
	y, m, _ := t.UTC().Date()
	return time.Date(y, m, 1, 0, 0, 0, 0, time.UTC)
}

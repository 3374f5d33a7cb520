package limits

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jonboulle/clockwork"
	"golang.org/x/sync/singleflight"

	"github.com/jobbie/jobbie/gateway/admitted"
	"github.com/jobbie/jobbie/gateway/controlapi"
	"github.com/jobbie/jobbie/wire"
)

// Plans: each tenant's plan as control tells it (controlapi's
// TenantPlan), cached here for the rate limits (ratelimit.go) and the
// plan's other limits.
//
// A tenant's first requests fetch its plan and wait up to
// Config.PlanFetchWait for it; after that its plan is fetched again every
// Config.PlanRefreshInterval in the background. While control cannot be
// reached the last plan known stays in force; a tenant whose plan was
// never fetched is admitted without limits (and logged) rather than
// refused: a control outage must not stop the data plane. Control's 404
// (no plan known) means no limits. A pending change (TenantPlan.Next)
// takes effect at its NextFrom without asking control. Tenants with no
// request for planIdle are forgotten.

const (
	// planSweep is how often the cache looks for plans to refresh, pending
	// changes due and idle tenants.
	planSweep = time.Second
	// planRetry is how soon a failed fetch is tried again.
	planRetry = time.Second
	// planIdle is how long a tenant without requests stays cached.
	planIdle = 10 * time.Minute
)

// Plans holds one planEntry per tenant seen.
type Plans struct {
	control controlapi.Control
	ctx     context.Context // bounds fetches; ends when the gateway stops
	clock   clockwork.Clock
	log     *slog.Logger
	refresh time.Duration // Config.PlanRefreshInterval
	wait    time.Duration // Config.PlanFetchWait
	rates   *rateSync     // builds and divides the rate limits a plan sets

	entries sync.Map // tenant id → *planEntry
	fetches singleflight.Group
	failing atomic.Bool // refreshes fail: logged once per outage
	sweepMu sync.Mutex  // one sweep at a time
}

// planEntry is one tenant's plan and what the hot path derives from it.
type planEntry struct {
	tid     string
	plan    atomic.Pointer[cachedPlan]            // nil until control answered
	rates   atomic.Pointer[tenantRates]           // nil: no rate limits, the hot path's one check; fetching: the first plan is on its way
	shard   atomic.Pointer[admitted.ShardHeaders] // what the plan tells shards (shardheaders.go); nil: the defaults
	fetched atomic.Int64                          // unix ns of the last answer (Config.Clock)
	retryAt atomic.Int64                          // unix ns before which a failed fetch is not repeated
	used    atomic.Bool                           // a request came since the last sweep
	warned  atomic.Bool                           // its first fetch failed and that was logged

	lastUsed time.Time // sweepMu guards it once the entry is stored
}

// cachedPlan is control's answer: a tenant's plan, or that it has none.
type cachedPlan struct {
	tp   wire.TenantPlan
	none bool
}

// now is the plan in effect at t: Next once NextFrom has come.
func (p *cachedPlan) now(t time.Time) (wire.TenantPlan, bool) {
	if p.none {
		return wire.TenantPlan{}, false
	}
	tp := p.tp
	if tp.Next != nil && tp.NextFrom != nil && !t.Before(*tp.NextFrom) {
		tp.Plan, tp.Since, tp.Next, tp.NextFrom = *tp.Next, *tp.NextFrom, nil, nil
	}
	return tp, true
}

// NewPlans keeps tenants' plans from cfg.Control; ctx ends its work.
func NewPlans(ctx context.Context, cfg Config) *Plans {
	return &Plans{control: cfg.Control, ctx: ctx, clock: cfg.Clock, log: cfg.Logger,
		refresh: cfg.PlanRefreshInterval, wait: cfg.PlanFetchWait, rates: newRateSync(cfg)}
}

// TenantPlan is tenant tid's plan as this gateway knows it, with the plan
// in effect now in Plan (a pending change whose time has come moved
// there), and whether it knows one: not before control has told it (a
// tenant's first requests ask, see Plans.await), nor for a tenant
// control knows no plan of.
func (pc *Plans) TenantPlan(tid string) (wire.TenantPlan, bool) {
	v, ok := pc.entries.Load(tid)
	if !ok {
		return wire.TenantPlan{}, false
	}
	p := v.(*planEntry).plan.Load()
	if p == nil {
		return wire.TenantPlan{}, false
	}
	return p.now(pc.clock.Now())
}

// fetching is the rates of a tenant whose first plan is on its way: its
// requests wait for it (Plans.await).
var fetching = &tenantRates{}

// entry is tenant tid's entry: one map lookup when cached.
func (pc *Plans) entry(tid string) *planEntry {
	if v, ok := pc.entries.Load(tid); ok {
		e := v.(*planEntry)
		if !e.used.Load() { // written once per sweep, not once per request
			e.used.Store(true)
		}
		return e
	}
	tid = strings.Clone(tid)
	e := &planEntry{tid: tid, lastUsed: pc.clock.Now()}
	e.rates.Store(fetching)
	v, _ := pc.entries.LoadOrStore(tid, e)
	e = v.(*planEntry)
	e.used.Store(true)
	return e
}

// await waits up to PlanFetchWait for e's first plan and returns the
// rates it sets. Past the wait, or on a failure, the tenant goes without
// limits until its plan comes, and no request waits for it again.
func (pc *Plans) await(e *planEntry) *tenantRates {
	ch := pc.fetches.DoChan(e.tid, func() (any, error) { return nil, pc.fetch(e) })
	t := time.NewTimer(pc.wait) // a network wait: the wall clock's
	defer t.Stop()
	select {
	case <-ch:
	case <-t.C:
	case <-pc.ctx.Done():
	}
	e.rates.CompareAndSwap(fetching, nil)
	return e.rates.Load()
}

// fetch asks control for e's plan. On failure the last plan known stays.
func (pc *Plans) fetch(e *planEntry) error {
	tp, err := pc.control.TenantPlan(pc.ctx, "", e.tid)
	now := pc.clock.Now()
	switch {
	case controlapi.NotFound(err):
		pc.install(e, &cachedPlan{none: true}, now)
	case err != nil:
		e.retryAt.Store(now.Add(planRetry).UnixNano())
		e.rates.CompareAndSwap(fetching, nil)
		if e.plan.Load() == nil && pc.ctx.Err() == nil && !e.warned.Swap(true) {
			pc.log.Warn("gateway: admitting a tenant's requests without rate limits: its plan is unknown and control does not answer",
				"tenant", e.tid, "err", err)
		}
		return err
	default:
		pc.install(e, &cachedPlan{tp: tp}, now)
	}
	if e.warned.Swap(false) {
		pc.log.Info("gateway: a tenant's plan is known again: its rate limits apply", "tenant", e.tid)
	}
	return nil
}

// install makes p e's plan, fetched at now.
func (pc *Plans) install(e *planEntry, p *cachedPlan, now time.Time) {
	e.plan.Store(p)
	e.fetched.Store(now.UnixNano())
	e.retryAt.Store(0)
	pc.applyLimits(e, now)
}

// applyLimits sets e's rate limits and shard headers from the plan in
// effect at now.
func (pc *Plans) applyLimits(e *planEntry, now time.Time) {
	p := e.plan.Load()
	if p == nil {
		return
	}
	var lim wire.PlanLimits
	var plan *wire.Plan
	if tp, ok := p.now(now); ok {
		lim, plan = tp.Plan.Limits, &tp.Plan
	}
	if sh, old := headersOf(plan), e.shard.Load(); old == nil || !headersEqual(old, sh) {
		e.shard.Store(sh)
	}
	old := e.rates.Load()
	if tr := pc.rates.limitsFor(e.tid, lim, old, now); tr != old {
		e.rates.Store(tr)
	}
}

// Run sweeps every planSweep until the gateway stops. It ticks on the
// wall clock, as a network poll; what is due is decided on Config.Clock.
func (pc *Plans) Run() {
	t := time.NewTicker(planSweep)
	defer t.Stop()
	for {
		select {
		case <-pc.ctx.Done():
			return
		case <-t.C:
			pc.Sweep()
		}
	}
}

// Sweep forgets idle tenants, applies pending changes whose time came,
// and refreshes the plans due, one at a time; a failure ends the sweep,
// so an unreachable control costs one call a sweep, not one per tenant.
func (pc *Plans) Sweep() {
	pc.sweepMu.Lock()
	defer pc.sweepMu.Unlock()
	now := pc.clock.Now()
	var due []*planEntry
	pc.entries.Range(func(k, v any) bool {
		e := v.(*planEntry)
		if e.used.Swap(false) {
			e.lastUsed = now
		} else if now.Sub(e.lastUsed) > planIdle {
			pc.entries.Delete(k)
			return true
		}
		pc.applyLimits(e, now) // a pending change may have come due
		if pc.due(e, now) {
			due = append(due, e)
		}
		return true
	})
	for _, e := range due {
		_, err, _ := pc.fetches.Do(e.tid, func() (any, error) { return nil, pc.fetch(e) })
		if pc.ctx.Err() != nil {
			return
		}
		if err != nil {
			if !pc.failing.Swap(true) {
				pc.log.Warn("gateway: cannot refresh tenants' plans: their last known limits stay in force", "err", err)
			}
			return
		}
	}
	if len(due) > 0 && pc.failing.Swap(false) {
		pc.log.Info("gateway: refreshing tenants' plans again")
	}
}

// due reports whether e's plan should be fetched at now.
func (pc *Plans) due(e *planEntry, now time.Time) bool {
	if r := e.retryAt.Load(); r != 0 {
		return now.UnixNano() >= r
	}
	return now.Sub(time.Unix(0, e.fetched.Load())) >= pc.refresh
}

// RunSync exchanges rate-limit demand with the other gateways, and sets
// each limit's share, until the gateway stops.
func (pc *Plans) RunSync() { pc.rates.run(pc.ctx, pc) }

package limits

import (
	"context"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/jonboulle/clockwork"
	"golang.org/x/sync/errgroup"

	"github.com/jobbie/jobbie/gateway/admitted"
	"github.com/jobbie/jobbie/gateway/controlapi"
	"github.com/jobbie/jobbie/gateway/proxy"
	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/wire"
)

// max_schedules caps a tenant's schedules over all its namespaces. They
// live on the shards of their namespaces, so the gateway counts them
// there: a schedule create (POST /api/v1/schedules; a PUT only replaces
// one that exists) under a plan with the limit lists the tenant's
// namespaces (control) and asks each one's shard how many schedules it
// holds (GET /api/v1/namespace), and is refused with 429 quota_exceeded,
// Retry-After ScheduleCountTTL, when the tenant has the limit already.
//
// How far the count holds:
//   - On one gateway a tenant's checked creates pass one at a time, each
//     after a fresh count, so creates through one gateway never take the
//     tenant past its limit.
//   - Gateways do not tell each other: creates racing through several
//     gateways can overshoot by the creates in flight at the same moment
//     on the others (at most one per gateway and tenant).
//   - A count that refused is kept ScheduleCountTTL, so retries of a
//     refused create cost no shard calls; a schedule or namespace deleted
//     through this gateway drops it at once, one deleted through another
//     gateway is seen when it runs out.
//   - When control or a namespace's shard cannot be reached, the tenant
//     cannot be counted and the create is a 503 (retry shortly), not
//     admitted unchecked.

const (
	// ScheduleCountTTL is how long a refusing count is kept.
	ScheduleCountTTL = 5 * time.Second
	// scheduleCountFanout bounds a count's concurrent shard calls.
	scheduleCountFanout = 8
)

// Schedules holds each tenant's last refusing count and serializes its
// checked creates.
type Schedules struct {
	plans   *Plans
	control controlapi.Control
	shards  *proxy.Proxy
	clock   clockwork.Clock
	log     *slog.Logger
	ctx     context.Context // ends when the gateway stops
	timeout time.Duration   // Config.ShardTimeout: a shard's count; a create waits twice this for its turn

	mu     sync.Mutex
	counts map[string]scheduleCount // tenant → its count, while fresh
	locks  map[string]*tenantLock   // tenant → its create in flight
}

type scheduleCount struct {
	n  int64
	at time.Time
}

// tenantLock is one tenant's turn; refs counts who holds or waits for it.
type tenantLock struct {
	ch   chan struct{} // holds a value while taken
	refs int
}

// NewSchedules counts tenants' schedules under plans' max_schedules, on
// their shards through p.
func NewSchedules(ctx context.Context, plans *Plans, p *proxy.Proxy, cfg Config) *Schedules {
	return &Schedules{plans: plans, control: cfg.Control, shards: p, clock: cfg.Clock, log: cfg.Logger, ctx: ctx,
		timeout: cfg.ShardTimeout, counts: map[string]scheduleCount{}, locks: map[string]*tenantLock{}}
}

// lock waits for tenant tid's turn, up to wait; the returned func gives
// it back. ok is false when the wait ran out or done closed.
func (sc *Schedules) lock(tid string, wait time.Duration, done <-chan struct{}) (unlock func(), ok bool) {
	sc.mu.Lock()
	l := sc.locks[tid]
	if l == nil {
		l = &tenantLock{ch: make(chan struct{}, 1)}
		sc.locks[tid] = l
	}
	l.refs++
	sc.mu.Unlock()
	release := func() {
		sc.mu.Lock()
		if l.refs--; l.refs == 0 {
			delete(sc.locks, tid)
		}
		sc.mu.Unlock()
	}
	t := time.NewTimer(wait) // a network wait: the wall clock's
	defer t.Stop()
	select {
	case l.ch <- struct{}{}:
		return func() { <-l.ch; release() }, true
	case <-t.C:
	case <-done:
	}
	release()
	return nil, false
}

// cached is tenant tid's count if one is fresh at now.
func (sc *Schedules) cached(tid string, now time.Time) (int64, bool) {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	c, ok := sc.counts[tid]
	if !ok || now.Sub(c.at) >= ScheduleCountTTL {
		return 0, false
	}
	return c.n, true
}

func (sc *Schedules) store(tid string, n int64, now time.Time) {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if len(sc.counts) >= maxQuotaEntries {
		clear(sc.counts) // bounded memory: forgetting costs a count, no more
	}
	sc.counts[tid] = scheduleCount{n: n, at: now}
}

// Forget drops tenant tid's count: its schedules changed.
func (sc *Schedules) Forget(tid string) {
	sc.mu.Lock()
	delete(sc.counts, tid)
	sc.mu.Unlock()
}

// Create serves a schedule create with forward once the tenant is under
// its plan's max_schedules.
func (sc *Schedules) Create(r *admitted.Request, forward func() error) error {
	tid := r.Key.TenantID
	tp, ok := sc.plans.TenantPlan(tid)
	if !ok || tp.Plan.Limits.MaxSchedules == nil {
		defer sc.Forget(tid)
		return forward()
	}
	limit := *tp.Plan.Limits.MaxSchedules
	unlock, ok := sc.lock(tid, 2*sc.timeout, sc.ctx.Done())
	if !ok {
		return apierr.Retry(apierr.Unavailable, 1, "another schedule create of this tenant is still being checked; retry shortly")
	}
	defer unlock()
	refuse := func() error {
		quotaRefusedTotal.WithLabelValues("max_schedules").Inc()
		return apierr.Retry(apierr.QuotaExceeded, int(ScheduleCountTTL/time.Second),
			"the max_schedules limit of %d of plan %q is reached: delete a schedule to create another", limit, tp.Plan.Name)
	}
	if n, ok := sc.cached(tid, sc.clock.Now()); ok && n >= limit {
		return refuse()
	}
	n, _, err := sc.count(r)
	if err != nil {
		return err
	}
	if n >= limit {
		sc.store(tid, n, sc.clock.Now())
		return refuse()
	}
	err = forward()
	sc.Forget(tid)
	return err
}

// Restore serves a backup restore with forward, which it tells the room
// the plan's max_schedules leaves for the schedules the backup brings
// (nil: no limit): the limit less the tenant's schedules, counted on its
// shards as for a create, those of replaced (the namespace a replace
// restores over, "" for none) not counted, as they go. Control refuses a
// backup that holds more. The tenant's creates wait for it, as they wait
// for each other; the restore itself runs after control answers, so a
// create racing its apply can still pass the count (as creates through
// two gateways can).
func (sc *Schedules) Restore(r *admitted.Request, replaced string, forward func(room *int64) error) error {
	if sc == nil {
		return forward(nil) // a gateway that counts no schedules (a node's local API)
	}
	tid := r.Key.TenantID
	tp, ok := sc.plans.TenantPlan(tid)
	if !ok || tp.Plan.Limits.MaxSchedules == nil {
		defer sc.Forget(tid)
		return forward(nil)
	}
	unlock, ok := sc.lock(tid, 2*sc.timeout, sc.ctx.Done())
	if !ok {
		return apierr.Retry(apierr.Unavailable, 1, "a schedule create of this tenant is still being checked; retry shortly")
	}
	defer unlock()
	n, each, err := sc.count(r)
	if err != nil {
		return err
	}
	room := *tp.Plan.Limits.MaxSchedules - n + each[replaced]
	err = forward(&room)
	sc.Forget(tid)
	return err
}

// count is how many schedules the caller's tenant has in all its
// namespaces, in all and by namespace, each namespace's count from its
// shard.
func (sc *Schedules) count(r *admitted.Request) (int64, map[string]int64, error) {
	list, err := sc.control.ListNamespaces(sc.ctx, r.RequestID, r.Key.TenantID)
	if err != nil {
		return 0, nil, controlapi.ForTenant(sc.log, r.RequestID, err)
	}
	counts := make([]int64, len(list.Namespaces))
	var g errgroup.Group
	g.SetLimit(scheduleCountFanout)
	for i, ns := range list.Namespaces {
		g.Go(func() error {
			var u wire.NamespaceUsage
			if err := sc.shards.ShardCall(r, ns.Name, http.MethodGet, proxy.NamespaceShardPath, sc.timeout, nil, http.StatusOK, &u); err != nil {
				return err
			}
			counts[i] = u.Schedules
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return 0, nil, err
	}
	var n int64
	each := make(map[string]int64, len(counts))
	for i, c := range counts {
		n += c
		each[list.Namespaces[i].Name] = c
	}
	return n, each, nil
}

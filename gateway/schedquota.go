package gateway

import (
	"net/http"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"
	"golang.org/x/sync/errgroup"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/wire"
)

// max_schedules caps a tenant's schedules over all its namespaces. They
// live on the shards of their namespaces, so the gateway counts them
// there: a schedule create (POST /api/v1/schedules; a PUT only replaces
// one that exists) under a plan with the limit lists the tenant's
// namespaces (control) and asks each one's shard how many schedules it
// holds (GET /api/v1/namespace), and is refused with 429 quota_exceeded,
// Retry-After scheduleCountTTL, when the tenant has the limit already.
//
// How far the count holds:
//   - On one gateway a tenant's checked creates pass one at a time, each
//     after a fresh count, so creates through one gateway never take the
//     tenant past its limit.
//   - Gateways do not tell each other: creates racing through several
//     gateways can overshoot by the creates in flight at the same moment
//     on the others (at most one per gateway and tenant).
//   - A count that refused is kept scheduleCountTTL, so retries of a
//     refused create cost no shard calls; a schedule or namespace deleted
//     through this gateway drops it at once, one deleted through another
//     gateway is seen when it runs out.
//   - When control or a namespace's shard cannot be reached, the tenant
//     cannot be counted and the create is a 503 (retry shortly), not
//     admitted unchecked.

const (
	// scheduleCountTTL is how long a refusing count is kept.
	scheduleCountTTL = 5 * time.Second
	// scheduleCountFanout bounds a count's concurrent shard calls.
	scheduleCountFanout = 8
)

// Schedule endpoints that keep the count.
var (
	proxiedScheduleCreate = endpoint{handle: (*Server).createScheduleChecked, queues: true}
	proxiedScheduleDelete = endpoint{handle: (*Server).deleteScheduleCounted, queues: true}
)

// scheduleCounts holds each tenant's last refusing count and serializes
// its checked creates.
type scheduleCounts struct {
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

func newScheduleCounts() *scheduleCounts {
	return &scheduleCounts{counts: map[string]scheduleCount{}, locks: map[string]*tenantLock{}}
}

// lock waits for tenant tid's turn, up to wait; the returned func gives
// it back. ok is false when the wait ran out or done closed.
func (sc *scheduleCounts) lock(tid string, wait time.Duration, done <-chan struct{}) (unlock func(), ok bool) {
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
func (sc *scheduleCounts) cached(tid string, now time.Time) (int64, bool) {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	c, ok := sc.counts[tid]
	if !ok || now.Sub(c.at) >= scheduleCountTTL {
		return 0, false
	}
	return c.n, true
}

func (sc *scheduleCounts) store(tid string, n int64, now time.Time) {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if len(sc.counts) >= maxQuotaEntries {
		clear(sc.counts) // bounded memory: forgetting costs a count, no more
	}
	sc.counts[tid] = scheduleCount{n: n, at: now}
}

// forget drops tenant tid's count: its schedules changed.
func (sc *scheduleCounts) forget(tid string) {
	sc.mu.Lock()
	delete(sc.counts, tid)
	sc.mu.Unlock()
}

// createScheduleChecked proxies a schedule create once the tenant is
// under its plan's max_schedules.
func (s *Server) createScheduleChecked(c *fiber.Ctx, r *call) error {
	tid := r.key.TenantID
	tp, ok := s.tenantPlan(tid)
	if !ok || tp.Plan.Limits.MaxSchedules == nil {
		defer s.schedules.forget(tid)
		return s.forward(c, r)
	}
	limit := *tp.Plan.Limits.MaxSchedules
	unlock, ok := s.schedules.lock(tid, 2*s.cfg.ShardTimeout, s.ctx.Done())
	if !ok {
		return apierr.Retry(apierr.Unavailable, 1, "another schedule create of this tenant is still being checked; retry shortly")
	}
	defer unlock()
	refuse := func() error {
		quotaRefusedTotal.WithLabelValues("max_schedules").Inc()
		return apierr.Retry(apierr.QuotaExceeded, int(scheduleCountTTL/time.Second),
			"the max_schedules limit of %d of plan %q is reached: delete a schedule to create another", limit, tp.Plan.Name)
	}
	if n, ok := s.schedules.cached(tid, s.cfg.Clock.Now()); ok && n >= limit {
		return refuse()
	}
	n, err := s.countSchedules(r)
	if err != nil {
		return err
	}
	if n >= limit {
		s.schedules.store(tid, n, s.cfg.Clock.Now())
		return refuse()
	}
	err = s.forward(c, r)
	s.schedules.forget(tid)
	return err
}

// deleteScheduleCounted proxies a schedule delete and drops the
// tenant's count.
func (s *Server) deleteScheduleCounted(c *fiber.Ctx, r *call) error {
	defer s.schedules.forget(r.key.TenantID)
	return s.forward(c, r)
}

// countSchedules is how many schedules the caller's tenant has in all its
// namespaces, each namespace's count from its shard.
func (s *Server) countSchedules(r *call) (int64, error) {
	var list wire.NamespaceList
	if err := s.controlJSON(r, http.MethodGet, tenantPath(r.key.TenantID, "/namespaces"), nil, http.StatusOK, &list); err != nil {
		return 0, err
	}
	counts := make([]int64, len(list.Namespaces))
	var g errgroup.Group
	g.SetLimit(scheduleCountFanout)
	for i, ns := range list.Namespaces {
		g.Go(func() error {
			var u wire.NamespaceUsage
			if err := s.shardCall(r, ns.Name, http.MethodGet, namespaceShardPath, s.cfg.ShardTimeout, nil, http.StatusOK, &u); err != nil {
				return err
			}
			counts[i] = u.Schedules
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return 0, err
	}
	var n int64
	for _, c := range counts {
		n += c
	}
	return n, nil
}

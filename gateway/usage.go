package gateway

import (
	"context"
	"errors"
	"log/slog"
	"math"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/oklog/ulid/v2"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// Usage: GET /api/v1/usage, served from control's ledger, and the
// api_requests meter, which gateways count since only they see requests.
//
// Each gateway counts the requests it admits per tenant and UTC hour
// under an instance id it draws when built, and pushes the absolute
// counts to control every Config.UsagePushInterval and when it stops
// (POST /internal/v1/usage/api-requests). Control keeps the largest count
// it was sent per (tenant, hour, instance), so pushing again is harmless;
// a gateway that crashes loses what it counted since its last push.

const apiRequestsPath = "/internal/v1/usage/api-requests"

// requestCounter counts admitted requests per tenant and hour. The hot
// path takes a read lock and adds atomically; only a tenant's first
// request of an hour takes the write lock.
type requestCounter struct {
	instance string
	control  *controlClient
	log      *slog.Logger

	cur     atomic.Pointer[hourCounts] // the latest hour counted
	mu      sync.Mutex                 // guards hours, never held across a push
	hours   map[int64]*hourCounts      // by unix second of the hour's start
	pushMu  sync.Mutex                 // serializes pushes
	failing bool                       // the last push failed (logged once)
}

type hourCounts struct {
	hour    int64
	mu      sync.RWMutex
	tenants map[string]*tenantCount
}

type tenantCount struct {
	n      atomic.Int64
	pushed int64 // what control last accepted; the pusher's alone
}

func newRequestCounter(control *controlClient, log *slog.Logger) *requestCounter {
	return &requestCounter{
		instance: "gw_" + strings.ToLower(ulid.Make().String()),
		control:  control, log: log, hours: map[int64]*hourCounts{},
	}
}

// add counts one request of tenant admitted at now.
func (rc *requestCounter) add(tenant string, now time.Time) {
	h := now.Unix()
	h -= h % 3600
	hc := rc.cur.Load()
	if hc == nil || hc.hour != h {
		hc = rc.hourOf(h)
	}
	hc.mu.RLock()
	c := hc.tenants[tenant]
	hc.mu.RUnlock()
	if c == nil {
		c = hc.counter(tenant)
	}
	c.n.Add(1)
}

func (rc *requestCounter) hourOf(h int64) *hourCounts {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	hc, ok := rc.hours[h]
	if !ok {
		hc = &hourCounts{hour: h, tenants: map[string]*tenantCount{}}
		rc.hours[h] = hc
	}
	if cur := rc.cur.Load(); cur == nil || cur.hour < h {
		rc.cur.Store(hc)
	}
	return hc
}

func (hc *hourCounts) counter(tenant string) *tenantCount {
	hc.mu.Lock()
	defer hc.mu.Unlock()
	c, ok := hc.tenants[tenant]
	if !ok {
		c = &tenantCount{}
		hc.tenants[strings.Clone(tenant)] = c // tenant may alias request memory
	}
	return c
}

// push sends control every count that changed since it last accepted
// it, then forgets hours over an hour old: nothing counts into them any
// more, and their last values were in this push.
func (rc *requestCounter) push(ctx context.Context, now time.Time) error {
	rc.pushMu.Lock()
	defer rc.pushMu.Unlock()
	rc.mu.Lock()
	hours := make([]*hourCounts, 0, len(rc.hours))
	for _, hc := range rc.hours {
		hours = append(hours, hc)
	}
	rc.mu.Unlock()
	type sent struct {
		c *tenantCount
		n int64
	}
	var counts []wire.APIRequestsCount
	var refs []sent
	for _, hc := range hours {
		hc.mu.RLock()
		for tenant, c := range hc.tenants {
			if n := c.n.Load(); n != c.pushed {
				counts = append(counts, wire.APIRequestsCount{TenantID: tenant, Hour: time.Unix(hc.hour, 0).UTC(), Count: n})
				refs = append(refs, sent{c, n})
			}
		}
		hc.mu.RUnlock()
	}
	for i := 0; i < len(counts); i += wire.MaxAPIRequestCounts {
		j := min(i+wire.MaxAPIRequestCounts, len(counts))
		if err := rc.control.postAPIRequests(ctx, wire.APIRequestsReport{Gateway: rc.instance, Counts: counts[i:j]}); err != nil {
			return err
		}
		for _, r := range refs[i:j] {
			r.c.pushed = r.n
		}
	}
	old := now.Unix() - now.Unix()%3600 - 3600
	rc.mu.Lock()
	defer rc.mu.Unlock()
	for h := range rc.hours {
		if h < old {
			delete(rc.hours, h)
		}
	}
	return nil
}

// run pushes every interval until ctx ends, logging when pushing starts
// and stops failing. It keeps real time rather than Config.Clock: the
// interval paces network calls, while the hours counted follow the clock.
func (rc *requestCounter) run(ctx context.Context, interval time.Duration, clock func() time.Time) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		err := rc.push(ctx, clock())
		switch {
		case err != nil && ctx.Err() != nil:
			return
		case err != nil && !rc.failing:
			rc.log.Warn("gateway: cannot push api request counts to control; retrying every interval", "err", err)
		case err == nil && rc.failing:
			rc.log.Info("gateway: pushing api request counts again")
		}
		rc.failing = err != nil
	}
}

// pushLast sends what is left when the gateway stops, briefly: a control
// plane that is down then loses the counts since the last push.
func (rc *requestCounter) pushLast(timeout time.Duration, now time.Time) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if err := rc.push(ctx, now); err != nil && !errors.Is(err, context.Canceled) {
		rc.log.Warn("gateway: could not push the last api request counts to control", "err", err)
	}
}

// getUsage serves GET /api/v1/usage from control. A namespace filter must
// be one the key may use and read usage in (403 otherwise). Without one,
// a key that may read usage in every namespace of its tenant gets the
// tenant's whole usage, api requests included; any other gets the
// namespaces it may read, and tenant buckets and totals of those alone
// (api requests are counted per tenant, so they are left out).
func (s *Server) getUsage(c *fiber.Ctx, r *call) error {
	ns := c.Query("namespace")
	if ns != "" {
		if err := tenancy.ValidateNamespace(ns); err != nil {
			return apierr.Field("namespace", "%v", err)
		}
		if !r.key.AllowsNamespace(ns) {
			return apierr.New(apierr.Forbidden, "API key %s may not use namespace %q", r.key.Subject, ns)
		}
		if err := s.authorizeIn(r, ns, tenancy.ActUsageRead); err != nil {
			return err
		}
	}
	// Parsed here as control parses it, so bad input is refused before
	// control is asked, and the defaults are this gateway's now.
	uq, err := wire.ParseUsageQuery(s.cfg.Clock.Now(), c.Query("from"), c.Query("to"), c.Query("granularity"))
	if err != nil {
		return apierr.Invalid(err)
	}
	q := url.Values{"from": {uq.From.Format(time.RFC3339)}, "to": {uq.To.Format(time.RFC3339)}, "granularity": {uq.Granularity}}
	if ns != "" {
		q.Set("namespace", ns)
	}
	var u wire.Usage
	if err := s.controlJSON(r, http.MethodGet, tenantPath(r.key.TenantID, "/usage?"+q.Encode()), nil, http.StatusOK, &u); err != nil {
		return err
	}
	if ns == "" && !readsAllUsage(r) {
		if err := s.narrowUsage(r, &u); err != nil {
			return err
		}
	}
	return c.JSON(u)
}

// everyNamespacesUsage is usage.read over the whole tenant.
var everyNamespacesUsage = []tenancy.Permission{{Actions: []string{string(tenancy.ActUsageRead)}, Namespaces: []string{"*"}, Queues: []string{"*"}}}

// readsAllUsage reports whether r's key may read usage in every
// namespace of its tenant: its namespaces and its role's cover them all.
func readsAllUsage(r *call) bool {
	if !r.key.AllowsNamespace(tenancy.AllNamespaces) {
		return false
	}
	perms := tenancy.BuiltinPermissions(r.key.Role)
	if r.roles != nil {
		perms, _ = r.roles.permissions(r.key.Role)
	}
	return tenancy.Uncovered(perms, everyNamespacesUsage) == ""
}

// narrowUsage keeps the namespaces r may read usage in and rebuilds the
// tenant's buckets and totals from them. A tenant bucket keeps control's
// incomplete flag, which is over all of the tenant's namespaces.
func (s *Server) narrowUsage(r *call, u *wire.Usage) error {
	kept := u.Namespaces[:0]
	for _, nm := range u.Namespaces {
		if !r.key.AllowsNamespace(nm.Namespace) {
			continue
		}
		ok, err := s.allowedIn(r, nm.Namespace, tenancy.ActUsageRead)
		if err != nil {
			return err
		}
		if ok {
			kept = append(kept, nm)
		}
	}
	u.Namespaces = kept
	sums := make(map[int64]*exactMeters, len(u.Tenant)) // by bucket start, unix seconds
	for i := range u.Tenant {
		sums[u.Tenant[i].Start.Unix()] = &exactMeters{}
	}
	var total exactMeters
	for _, nm := range kept {
		for _, b := range nm.Buckets {
			if m, ok := sums[b.Start.Unix()]; ok {
				m.add(b.Meters)
			}
		}
		total.add(nm.Totals)
	}
	for i := range u.Tenant {
		u.Tenant[i].Meters = sums[u.Tenant[i].Start.Unix()].view()
	}
	u.Totals = total.view()
	return nil
}

// exactMeters sums wire.UsageMeters in the integers they were derived
// from (milliseconds, byte-milliseconds), so sums carry no float error.
type exactMeters struct {
	enqueued, executions, completed, failed, dead, activeMs, storageByteMs int64
}

func (e *exactMeters) add(m wire.UsageMeters) {
	e.enqueued += m.JobsEnqueued
	e.executions += m.Executions
	e.completed += m.JobsCompleted
	e.failed += m.JobsFailed
	e.dead += m.JobsDead
	e.activeMs += int64(math.Round(m.ActiveJobSeconds * 1e3))
	e.storageByteMs += int64(math.Round(m.StorageByteHours * 3.6e6))
}

func (e exactMeters) view() wire.UsageMeters {
	return wire.UsageMeters{JobsEnqueued: e.enqueued, Executions: e.executions, JobsCompleted: e.completed,
		JobsFailed: e.failed, JobsDead: e.dead, ActiveJobSeconds: float64(e.activeMs) / 1e3,
		StorageByteHours: float64(e.storageByteMs) / 3.6e6}
}

package limits

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/oklog/ulid/v2"

	"github.com/jobbie/jobbie/gateway/controlapi"
	"github.com/jobbie/jobbie/wire"
)

// The api_requests meter, which gateways count since only they see
// requests. Each gateway counts the requests it admits per tenant and UTC hour
// under an instance id it draws when built, and pushes the absolute
// counts to control every Config.UsagePushInterval and when it stops
// (controlapi's ReportAPIRequests). Control keeps the largest count
// it was sent per (tenant, hour, instance), so pushing again is harmless;
// a gateway that crashes loses what it counted since its last push.

// Meter counts admitted requests per tenant and hour. The hot path
// takes a read lock and adds atomically; only a tenant's first request
// of an hour takes the write lock.
type Meter struct {
	instance string
	control  controlapi.Control
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

// NewMeter counts under a new instance id, pushing to control.
func NewMeter(control controlapi.Control, log *slog.Logger) *Meter {
	return &Meter{
		instance: "gw_" + strings.ToLower(ulid.Make().String()),
		control:  control, log: log, hours: map[int64]*hourCounts{},
	}
}

// Add counts one request of tenant admitted at now.
func (rc *Meter) Add(tenant string, now time.Time) {
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

func (rc *Meter) hourOf(h int64) *hourCounts {
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
func (rc *Meter) push(ctx context.Context, now time.Time) error {
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
		if err := rc.control.ReportAPIRequests(ctx, wire.APIRequestsReport{Gateway: rc.instance, Counts: counts[i:j]}); err != nil {
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

// Run pushes every interval until ctx ends, logging when pushing starts
// and stops failing. It keeps real time rather than Config.Clock: the
// interval paces network calls, while the hours counted follow the clock.
func (rc *Meter) Run(ctx context.Context, interval time.Duration, clock func() time.Time) {
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

// PushLast sends what is left when the gateway stops, briefly: a control
// plane that is down then loses the counts since the last push.
func (rc *Meter) PushLast(timeout time.Duration, now time.Time) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if err := rc.push(ctx, now); err != nil && !errors.Is(err, context.Canceled) {
		rc.log.Warn("gateway: could not push the last api request counts to control", "err", err)
	}
}

package gateway

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/pki/pkitest"
	"github.com/jobbie/jobbie/wire"
)

// fakeUsageControl stands in front of a bundle's fake control and serves
// control's usage endpoints itself: each tenant's canned answer, and the
// api request counts gateways push. Everything else goes on to the fake
// control.
type fakeUsageControl struct {
	srv *httptest.Server

	mu      sync.Mutex
	usage   map[string]wire.Usage // by tenant id
	queries []usageAsked
	pushes  []wire.APIRequestsReport
	pushed  chan struct{} // a value per push, while there is room
}

// usageAsked is one usage request control saw.
type usageAsked struct {
	tenant string
	query  url.Values
}

// setupUsage is setup with a fakeUsageControl in front of control.
func setupUsage(t testing.TB, opts ...func(*Config)) (*bundle, *fakeUsageControl) {
	b := newBundle(t)
	fu := &fakeUsageControl{usage: map[string]wire.Usage{}, pushed: make(chan struct{}, 64)}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /internal/v1/tenants/{tid}/usage", gatewayOnly(fu.serveUsage))
	mux.HandleFunc("POST /internal/v1/usage/api-requests", gatewayOnly(fu.servePush))
	mux.Handle("/", b.control.srv.Config.Handler)
	fu.srv = httptest.NewUnstartedServer(mux)
	serveTLS(t, fu.srv, b.ca, pkitest.Control)
	b.start(t, append([]func(*Config){func(c *Config) { c.ControlURL = fu.srv.URL }}, opts...)...)
	b.waitReady(t)
	return b, fu
}

func (fu *fakeUsageControl) serveUsage(w http.ResponseWriter, r *http.Request) {
	fu.mu.Lock()
	defer fu.mu.Unlock()
	tid := r.PathValue("tid")
	fu.queries = append(fu.queries, usageAsked{tenant: tid, query: r.URL.Query()})
	u, ok := fu.usage[tid]
	if !ok {
		writeErr(w, apierr.New(apierr.NotFound, "tenant not found"))
		return
	}
	if ns := r.URL.Query().Get("namespace"); ns != "" {
		// As control answers a namespace: its own, without api requests.
		u.Namespaces = slices.DeleteFunc(slices.Clone(u.Namespaces), func(nm wire.NamespaceMeters) bool { return nm.Namespace != ns })
		u.Totals.APIRequests = 0
	}
	writeJSON(w, http.StatusOK, u)
}

func (fu *fakeUsageControl) servePush(w http.ResponseWriter, r *http.Request) {
	var in wire.APIRequestsReport
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		writeErr(w, apierr.New(apierr.BadRequest, "%v", err))
		return
	}
	fu.mu.Lock()
	fu.pushes = append(fu.pushes, in)
	fu.mu.Unlock()
	select {
	case fu.pushed <- struct{}{}:
	default:
	}
	w.WriteHeader(http.StatusNoContent)
}

func (fu *fakeUsageControl) set(tid string, u wire.Usage) {
	fu.mu.Lock()
	defer fu.mu.Unlock()
	fu.usage[tid] = u
}

func (fu *fakeUsageControl) asked() []usageAsked {
	fu.mu.Lock()
	defer fu.mu.Unlock()
	return slices.Clone(fu.queries)
}

func (fu *fakeUsageControl) pushList() []wire.APIRequestsReport {
	fu.mu.Lock()
	defer fu.mu.Unlock()
	return slices.Clone(fu.pushes)
}

// counted is the latest count pushed for each (tenant, hour), whichever
// instance pushed it, and the instances seen.
func (fu *fakeUsageControl) counted() (map[string]map[time.Time]int64, []string) {
	fu.mu.Lock()
	defer fu.mu.Unlock()
	out := map[string]map[time.Time]int64{}
	var gws []string
	for _, p := range fu.pushes {
		if !slices.Contains(gws, p.Gateway) {
			gws = append(gws, p.Gateway)
		}
		for _, c := range p.Counts {
			if out[c.TenantID] == nil {
				out[c.TenantID] = map[time.Time]int64{}
			}
			out[c.TenantID][c.Hour] = c.Count
		}
	}
	return out, gws
}

// sampleUsage is two namespaces' usage on 5 November 2026, 9:00 to
// 11:00, with api requests in the tenant's buckets.
func sampleUsage() wire.Usage {
	h9, h10 := time.Date(2026, 11, 5, 9, 0, 0, 0, time.UTC), time.Date(2026, 11, 5, 10, 0, 0, 0, time.UTC)
	m := func(n int64, ms int64) wire.UsageMeters {
		return wire.UsageMeters{JobsEnqueued: n, Executions: n, JobsCompleted: n, ActiveJobSeconds: float64(ms) / 1e3}
	}
	withAPI := func(u wire.UsageMeters, n int64) wire.UsageMeters { u.APIRequests = n; return u }
	return wire.Usage{
		From: h9, To: h10.Add(time.Hour), Granularity: "hour",
		Namespaces: []wire.NamespaceMeters{
			{Namespace: "default", Buckets: []wire.UsageBucketView{{Start: h9, Meters: m(3, 300)}}, Totals: m(3, 300)},
			{Namespace: "emails", Buckets: []wire.UsageBucketView{{Start: h9, Meters: m(1, 100)}, {Start: h10, Meters: m(2, 1),
				Incomplete: true}}, Totals: m(3, 101)},
		},
		Tenant: []wire.UsageBucketView{{Start: h9, Meters: withAPI(m(4, 400), 7)}, {Start: h10, Meters: withAPI(m(2, 1), 1), Incomplete: true}},
		Totals: withAPI(m(6, 401), 8),
	}
}

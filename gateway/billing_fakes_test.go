package gateway

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/pki/pkitest"
	"github.com/jobbie/jobbie/wire"
)

// fakeBillingControl stands in front of a bundle's fake control and
// serves control's plan, invoice and quota endpoints from memory, as
// control does: per tenant, an invoice id of another tenant not found.
// Everything else goes on to the fake control.
type fakeBillingControl struct {
	srv *httptest.Server

	mu       sync.Mutex
	plans    map[string]wire.TenantPlan
	invoices map[string]map[string][]byte // tenant → invoice id ("upcoming" too) → control's bytes
	quotas   map[string]wire.TenantQuota
	asked    []string      // tenant of every quota request
	quotaN   chan struct{} // a value per quota answered, while there is room
}

func setupBilling(t testing.TB, opts ...func(*Config)) (*bundle, *fakeBillingControl) {
	b := newBundle(t)
	fb := &fakeBillingControl{plans: map[string]wire.TenantPlan{}, invoices: map[string]map[string][]byte{},
		quotas: map[string]wire.TenantQuota{}, quotaN: make(chan struct{}, 64)}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /internal/v1/tenants/{tid}/plan", gatewayOnly(fb.servePlan))
	mux.HandleFunc("GET /internal/v1/tenants/{tid}/invoices", gatewayOnly(fb.serveList))
	mux.HandleFunc("GET /internal/v1/tenants/{tid}/invoices/{id}", gatewayOnly(fb.serveInvoice))
	mux.HandleFunc("GET /internal/v1/tenants/{tid}/quota", gatewayOnly(fb.serveQuota))
	mux.HandleFunc("POST /internal/v1/tenants/"+tenantB+"/keys", gatewayOnly(func(w http.ResponseWriter, _ *http.Request) {
		writeErr(w, apierr.New(apierr.QuotaExceeded, `the max_keys limit of 2 of plan "tiny" is reached`))
	}))
	mux.Handle("/", b.control.srv.Config.Handler)
	fb.srv = httptest.NewUnstartedServer(mux)
	serveTLS(t, fb.srv, b.ca, pkitest.Control)
	b.start(t, append([]func(*Config){func(c *Config) { c.ControlURL = fb.srv.URL }}, opts...)...)
	b.waitReady(t)
	return b, fb
}

func (fb *fakeBillingControl) servePlan(w http.ResponseWriter, r *http.Request) {
	fb.mu.Lock()
	defer fb.mu.Unlock()
	tp, ok := fb.plans[r.PathValue("tid")]
	if !ok {
		writeErr(w, apierr.New(apierr.NotFound, "tenant not found"))
		return
	}
	writeJSON(w, http.StatusOK, tp)
}

func (fb *fakeBillingControl) serveList(w http.ResponseWriter, r *http.Request) {
	fb.mu.Lock()
	defer fb.mu.Unlock()
	list := wire.InvoiceList{Invoices: []wire.InvoiceSummary{}}
	for id, b := range fb.invoices[r.PathValue("tid")] {
		if id == "upcoming" {
			continue
		}
		var inv wire.Invoice
		_ = json.Unmarshal(b, &inv)
		list.Invoices = append(list.Invoices, wire.InvoiceSummary{ID: inv.ID, Period: inv.Period, Status: inv.Status, Total: inv.Total, Currency: inv.Currency})
	}
	sort.Slice(list.Invoices, func(i, j int) bool { return list.Invoices[i].ID > list.Invoices[j].ID })
	writeJSON(w, http.StatusOK, list)
}

func (fb *fakeBillingControl) serveInvoice(w http.ResponseWriter, r *http.Request) {
	fb.mu.Lock()
	defer fb.mu.Unlock()
	b, ok := fb.invoices[r.PathValue("tid")][r.PathValue("id")]
	if !ok {
		writeErr(w, apierr.New(apierr.NotFound, "invoice %q not found", r.PathValue("id")))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(b)
}

func (fb *fakeBillingControl) serveQuota(w http.ResponseWriter, r *http.Request) {
	fb.mu.Lock()
	tid := r.PathValue("tid")
	fb.asked = append(fb.asked, tid)
	q, ok := fb.quotas[tid]
	fb.mu.Unlock()
	if !ok {
		writeErr(w, apierr.New(apierr.NotFound, "tenant not found"))
	} else {
		writeJSON(w, http.StatusOK, q)
	}
	select {
	case fb.quotaN <- struct{}{}:
	default:
	}
}

func (fb *fakeBillingControl) setInvoice(t testing.TB, tid, id string, inv wire.Invoice) []byte {
	b, err := json.Marshal(inv)
	if err != nil {
		t.Fatal(err)
	}
	fb.mu.Lock()
	defer fb.mu.Unlock()
	if fb.invoices[tid] == nil {
		fb.invoices[tid] = map[string][]byte{}
	}
	fb.invoices[tid][id] = b
	return b
}

func (fb *fakeBillingControl) setQuota(q wire.TenantQuota) {
	fb.mu.Lock()
	defer fb.mu.Unlock()
	fb.quotas[q.TenantID] = q
}

// setPlan puts tenant tid on a plan with limits, as control would answer it.
func (fb *fakeBillingControl) setPlan(tid, name string, limits wire.PlanLimits) {
	fb.mu.Lock()
	defer fb.mu.Unlock()
	fb.plans[tid] = wire.TenantPlan{TenantID: tid, Plan: wire.Plan{Name: name, Currency: "USD", Version: 1, Limits: limits}}
}

func (fb *fakeBillingControl) quotaAsks() int {
	fb.mu.Lock()
	defer fb.mu.Unlock()
	return len(fb.asked)
}

// sampleInvoice is an invoice of tid for March 2026 with two lines.
func sampleInvoice(tid, status string) wire.Invoice {
	mar, apr := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC)
	return wire.Invoice{
		ID: "inv_" + tid + "_2026-03", TenantID: tid, Period: wire.InvoicePeriod{Start: mar, End: apr}, Currency: "EUR", Status: status,
		Plans: []wire.InvoicePlan{{Name: "pro", Version: 2, Currency: "EUR", From: mar, To: apr}},
		Lines: []wire.InvoiceLine{
			{Meter: "executions", Namespace: "default", Plan: "pro", PlanVersion: 2, From: mar, To: apr, Quantity: "2500", QuantityUnit: "executions",
				IncludedApplied: "1000", Billable: "1500", Unit: 1000, UnitPrice: 5, BilledUnits: "2", Amount: 10},
			{Meter: "storage_byte_hours", Namespace: "emails, \"eu\"", Plan: "pro", PlanVersion: 2, From: mar, To: apr, Quantity: "12000000000000000000",
				QuantityUnit: "byte_ms", IncludedApplied: "0", Billable: "12000000000000000000", BilledUnits: "0"},
		},
		Subtotal: 10, Total: 10, GeneratedFrom: wire.InvoiceSource{LedgerHours: 3, LedgerEntries: 4, ClosedThrough: apr},
	}
}

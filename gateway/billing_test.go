package gateway

import (
	"bytes"
	"encoding/csv"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/gateway/internal/controlfake"
	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// fakeBilling is the fake control's plans, quotas and invoices, set as
// control would answer them.
type fakeBilling struct{ *controlfake.Control }

// setupBilling is setup where tenant B's plan allows no more keys.
func setupBilling(t testing.TB, opts ...func(*Config)) (*bundle, fakeBilling) {
	b := newBundle(t)
	b.control.KeysRefused[tenantB] = apierr.New(apierr.QuotaExceeded, `the max_keys limit of 2 of plan "tiny" is reached`)
	b.start(t, opts...)
	b.waitReady(t)
	return b, fakeBilling{b.control}
}

// setPlan puts tenant tid on a plan with limits, as control would answer it.
func (fb fakeBilling) setPlan(tid, name string, limits wire.PlanLimits) {
	fb.SetPlan(tid, wire.TenantPlan{Plan: wire.Plan{Name: name, Currency: "USD", Version: 1, Limits: limits}})
}

// setTenantPlan puts tenant tid on plan p as control would answer it.
func (fb fakeBilling) setTenantPlan(tid string, p wire.Plan) {
	p.Currency, p.Version = "USD", 1
	fb.SetPlan(tid, wire.TenantPlan{Plan: p})
}

func billingWorld(t *testing.T) (*bundle, fakeBilling, []byte) {
	b, fb := setupBilling(t)
	limit := int64(10)
	fb.SetPlan(tenantA, wire.TenantPlan{TenantID: tenantA, Plan: wire.Plan{Name: "pro", Currency: "EUR", Version: 2,
		Prices: map[string]wire.Price{"executions": {Unit: 1000, Price: 5}}, Limits: wire.PlanLimits{MaxNamespaces: &limit}},
		Since: time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)})
	fb.SetPlan(tenantB, wire.TenantPlan{TenantID: tenantB, Plan: wire.Plan{Name: "free", Currency: "USD", Version: 1}})
	closed := fb.SetInvoice(tenantA, "inv_"+tenantA+"_2026-03", sampleInvoice(tenantA, wire.InvoiceClosed))
	up := sampleInvoice(tenantA, wire.InvoiceOpen)
	up.ID, up.Lines, up.Subtotal, up.Total = "inv_"+tenantA+"_2026-04", []wire.InvoiceLine{}, 0, 0
	fb.SetInvoice(tenantA, "upcoming", up)
	fb.SetInvoice(tenantB, "inv_"+tenantB+"_2026-03", sampleInvoice(tenantB, wire.InvoiceClosed))
	return b, fb, closed
}

func TestBillingPlanShowsTheTenantsPlan(t *testing.T) {
	t.Parallel()
	b, _, _ := billingWorld(t)
	r := b.do(t, http.MethodGet, "/api/v1/plan", b.key(t, tenancy.RoleBilling, "*"), nil)
	require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)
	var tp wire.TenantPlan
	r.decode(t, &tp)
	require.Equal(t, tenantA, tp.TenantID)
	require.Equal(t, "pro", tp.Plan.Name)
	require.Equal(t, int64(10), *tp.Plan.Limits.MaxNamespaces)

	bKey := b.signer.Sign(claimsFor(tenantB, "key_b", tenancy.RoleOwner, "*"))
	r = b.do(t, http.MethodGet, "/api/v1/plan", bKey, nil)
	r.decode(t, &tp)
	require.Equal(t, tenantB, tp.TenantID)
	require.Equal(t, "free", tp.Plan.Name, "B sees its own plan, not A's")
}

func TestBillingInvoicesListShowAndUpcoming(t *testing.T) {
	t.Parallel()
	b, _, closed := billingWorld(t)
	key := b.key(t, tenancy.RoleBilling, "*")

	r := b.do(t, http.MethodGet, "/api/v1/invoices", key, nil)
	require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)
	var list wire.InvoiceList
	r.decode(t, &list)
	require.Equal(t, []wire.InvoiceSummary{{ID: "inv_" + tenantA + "_2026-03", Status: "closed", Total: 10, Currency: "EUR",
		Period: wire.InvoicePeriod{Start: time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC), End: time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC)}}}, list.Invoices)

	r = b.do(t, http.MethodGet, "/api/v1/invoices/inv_"+tenantA+"_2026-03", key, nil)
	require.Equal(t, http.StatusOK, r.status)
	require.Equal(t, "application/json", r.header.Get("Content-Type"))
	require.Equal(t, closed, r.body, "control's bytes, as they are")

	r = b.do(t, http.MethodGet, "/api/v1/invoices/upcoming", key, nil)
	require.Equal(t, http.StatusOK, r.status)
	var up wire.Invoice
	r.decode(t, &up)
	require.Equal(t, wire.InvoiceOpen, up.Status)
	require.Equal(t, "inv_"+tenantA+"_2026-04", up.ID)
}

func TestBillingInvoiceCSV(t *testing.T) {
	t.Parallel()
	b, _, _ := billingWorld(t)
	r := b.do(t, http.MethodGet, "/api/v1/invoices/inv_"+tenantA+"_2026-03/csv", b.key(t, tenancy.RoleOwner, "*"), nil)
	require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)
	require.Equal(t, "text/csv; charset=utf-8", r.header.Get("Content-Type"))
	require.Contains(t, r.header.Get("Content-Disposition"), "inv_"+tenantA+"_2026-03.csv")
	rows, err := csv.NewReader(bytes.NewReader(r.body)).ReadAll()
	require.NoError(t, err)
	require.Len(t, rows, 3, "a header and a row per line")
	require.Equal(t, wire.InvoiceCSVHeader, rows[0])
	id := "inv_" + tenantA + "_2026-03"
	require.Equal(t, []string{id, "2026-03-01T00:00:00Z", "EUR", "pro", "2", "2026-03-01T00:00:00Z", "2026-04-01T00:00:00Z", "executions", "default",
		"2500", "executions", "1000", "1500", "1000", "5", "2", "10"}, rows[1])
	require.Equal(t, `emails, "eu"`, rows[2][8], "quoted as CSV quotes")
	require.Equal(t, "12000000000000000000", rows[2][9], "exact, past 2^63")

	r = b.do(t, http.MethodGet, "/api/v1/invoices/upcoming/csv", b.key(t, tenancy.RoleOwner, "*"), nil)
	require.Equal(t, http.StatusOK, r.status)
	rows, err = csv.NewReader(bytes.NewReader(r.body)).ReadAll()
	require.NoError(t, err)
	require.Len(t, rows, 1, "no lines yet: the header alone")
}

// Plans and invoices need usage.read over the whole tenant: billing,
// owner and admin keys; a viewer (and every other built-in role) is 403,
// and so is a key narrowed to some namespaces.
func TestBillingNeedsUsageReadOverTheTenant(t *testing.T) {
	t.Parallel()
	b, _, _ := billingWorld(t)
	paths := []string{"/api/v1/plan", "/api/v1/invoices", "/api/v1/invoices/upcoming",
		"/api/v1/invoices/inv_" + tenantA + "_2026-03", "/api/v1/invoices/inv_" + tenantA + "_2026-03/csv"}
	for _, p := range paths {
		b.do(t, http.MethodGet, p, "", nil).requireError(t, http.StatusUnauthorized, apierr.Unauthenticated)
		b.do(t, http.MethodGet, p, "not-a-key", nil).requireError(t, http.StatusUnauthorized, apierr.Unauthenticated)
		for _, role := range []tenancy.Role{tenancy.RoleViewer, tenancy.RoleDeveloper, tenancy.RoleProducer, tenancy.RoleWorker} {
			e := b.do(t, http.MethodGet, p, b.key(t, role, "*"), nil).requireError(t, http.StatusForbidden, apierr.Forbidden)
			require.Contains(t, e.Message, "usage.read", "%s as %s", p, role)
		}
		e := b.do(t, http.MethodGet, p, b.key(t, tenancy.RoleBilling, "emails"), nil).requireError(t, http.StatusForbidden, apierr.Forbidden)
		require.Contains(t, e.Message, "whole tenant")
		for _, role := range []tenancy.Role{tenancy.RoleOwner, tenancy.RoleAdmin, tenancy.RoleBilling} {
			r := b.do(t, http.MethodGet, p, b.key(t, role, "*"), nil)
			require.Equal(t, http.StatusOK, r.status, "%s as %s: %s", p, role, r.body)
		}
	}
}

// Tenant B never sees A's invoices: A's id asked with B's key is not
// found, as an id that does not exist; a malformed id is a 400.
func TestBillingTenantsApart(t *testing.T) {
	t.Parallel()
	b, _, _ := billingWorld(t)
	bKey := b.signer.Sign(claimsFor(tenantB, "key_b", tenancy.RoleBilling, "*"))
	for _, p := range []string{"/api/v1/invoices/inv_" + tenantA + "_2026-03", "/api/v1/invoices/inv_" + tenantA + "_2026-03/csv"} {
		e := b.do(t, http.MethodGet, p, bKey, nil).requireError(t, http.StatusNotFound, apierr.NotFound)
		require.NotContains(t, e.Message, "tenant")
	}
	r := b.do(t, http.MethodGet, "/api/v1/invoices", bKey, nil)
	var list wire.InvoiceList
	r.decode(t, &list)
	require.Len(t, list.Invoices, 1)
	require.Equal(t, "inv_"+tenantB+"_2026-03", list.Invoices[0].ID)

	aKey := b.key(t, tenancy.RoleBilling, "*")
	b.do(t, http.MethodGet, "/api/v1/invoices/inv_"+tenantA+"_2026-01", aKey, nil).requireError(t, http.StatusNotFound, apierr.NotFound)
	for _, id := range []string{"nope", "inv_" + tenantA + "_26-03", "inv_A_2026-03"} {
		e := b.do(t, http.MethodGet, "/api/v1/invoices/"+id, aKey, nil).requireError(t, http.StatusBadRequest, apierr.BadRequest)
		require.Equal(t, "id", e.Field)
	}
}

// A plan's count quota refused by control reaches the tenant as control
// said it: 429 quota_exceeded.
func TestBillingCountQuotaFromControlPassesThrough(t *testing.T) {
	t.Parallel()
	b, _, _ := billingWorld(t)
	bKey := b.signer.Sign(claimsFor(tenantB, "key_b", tenancy.RoleOwner, "*"))
	e := b.do(t, http.MethodPost, "/api/v1/keys", bKey, map[string]any{"name": "k", "role": "worker", "namespaces": []string{"default"}}).
		requireError(t, http.StatusTooManyRequests, apierr.QuotaExceeded)
	require.Contains(t, e.Message, "max_keys")
	require.Contains(t, e.Message, `"tiny"`)
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

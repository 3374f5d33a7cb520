package e2e

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"math/big"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// The operator puts a plan on control and moves a tenant to it (from the
// next UTC hour); real jobs through the gateway show in the upcoming
// invoice's lines exactly, priced by the plan of each hour; billing reads
// plan and invoices, a viewer cannot, another tenant cannot see them.
func TestBillingUpcomingInvoiceFromRealWork(t *testing.T) {
	t.Parallel()
	owner, ct := shared.tenant(t)
	tid := ct.Tenant.ID
	name := "e2e-" + tid[len("t_"):] // plans are the deployment's: one of this test's own
	ops := func(method, path string, body any) reply {
		return callVia(t, shared.ops, method, shared.control+path, shared.operatorKey, body)
	}
	r := ops(http.MethodPost, "/control/v1/plans", map[string]any{
		"name": name, "currency": "EUR",
		"prices":   map[string]any{"executions": map[string]any{"unit": 2, "price": 7}, "jobs_enqueued": map[string]any{"unit": 1, "price": 1}},
		"included": map[string]any{"executions": 1},
		"limits":   map[string]any{"max_keys": 20},
	})
	require.Equal(t, http.StatusCreated, r.Status, "body: %s", r.Raw)
	r = ops(http.MethodPost, "/control/v1/plans", map[string]any{"name": name + "-x", "currency": "euro"})
	require.Equal(t, http.StatusBadRequest, r.Status)
	require.Equal(t, "currency", r.field())
	r = callVia(t, shared.ops, http.MethodGet, shared.control+"/control/v1/plans", ct.OwnerKey, nil)
	require.Equal(t, http.StatusForbidden, r.Status, "a tenant's key is not the operator's")
	r = ops(http.MethodPut, "/control/v1/tenants/"+tid+"/plan", map[string]string{"plan": name})
	require.Equal(t, http.StatusOK, r.Status, "body: %s", r.Raw)

	billing, err := owner.CreateKey(ctx(t), clientKey("billing", tenancy.RoleBilling, "*"))
	require.NoError(t, err)
	viewer, err := owner.CreateKey(ctx(t), clientKey("viewer", tenancy.RoleViewer, "*"))
	require.NoError(t, err)
	r = call(t, http.MethodGet, shared.gateway+"/api/v1/plan", billing.Token, nil)
	require.Equal(t, http.StatusOK, r.Status, "body: %s", r.Raw)
	var tp wire.TenantPlan
	require.NoError(t, json.Unmarshal(r.Raw, &tp))
	require.Equal(t, tid, tp.TenantID)
	next := time.Now().UTC().Truncate(time.Hour).Add(time.Hour)
	if tp.Next != nil { // unless the hour turned since the change
		require.Equal(t, "free", tp.Plan.Name)
		require.Equal(t, name, tp.Next.Name)
		require.True(t, tp.NextFrom.Equal(next) || tp.NextFrom.Before(next))
	} else {
		require.Equal(t, name, tp.Plan.Name)
	}

	requests := 0
	const n = 5
	work(t, owner, "default", n, 0, &requests)

	var inv wire.Invoice
	eventually(t, usageLag, func() bool {
		r := call(t, http.MethodGet, shared.gateway+"/api/v1/invoices/upcoming", billing.Token, nil)
		require.Equal(t, http.StatusOK, r.Status, "body: %s", r.Raw)
		inv = wire.Invoice{}
		require.NoError(t, json.Unmarshal(r.Raw, &inv))
		return sumOf(inv, "executions", "default") == n && sumOf(inv, "jobs_enqueued", "default") == n
	}, "the upcoming invoice shows the work")
	require.Equal(t, "inv_"+tid+"_"+time.Now().UTC().Format("2006-01"), inv.ID)
	require.Equal(t, wire.InvoiceOpen, inv.Status)
	require.Equal(t, "EUR", inv.Currency, "the plan's, from its stretch on")
	require.NotEmpty(t, inv.Plans)
	require.Equal(t, name, inv.Plans[len(inv.Plans)-1].Name)
	var total int64
	for _, l := range inv.Lines {
		switch l.Plan {
		case "free":
			require.Zero(t, l.Amount, "free has no prices")
		case name:
			// Billed in whole units, rounded up, at the plan's price.
			units := new(big.Int)
			units.SetString(l.Billable.String(), 10)
			unit := big.NewInt(l.Unit)
			units.Add(units, new(big.Int).Sub(unit, big.NewInt(1))).Quo(units, unit)
			require.Equal(t, units.String(), l.BilledUnits.String(), "%+v", l)
			require.Equal(t, units.Int64()*l.UnitPrice, l.Amount)
		default:
			t.Fatalf("a line of plan %q", l.Plan)
		}
		total += l.Amount
	}
	require.Equal(t, total, inv.Total)

	// The CSV has the same lines; the list holds the month, open.
	r = call(t, http.MethodGet, shared.gateway+"/api/v1/invoices/"+inv.ID+"/csv", billing.Token, nil)
	require.Equal(t, http.StatusOK, r.Status, "body: %s", r.Raw)
	require.Equal(t, "text/csv; charset=utf-8", r.Header.Get("Content-Type"))
	rows, err := csv.NewReader(bytes.NewReader(r.Raw)).ReadAll()
	require.NoError(t, err)
	require.Equal(t, wire.InvoiceCSVHeader, rows[0])
	require.GreaterOrEqual(t, len(rows), 3, "a header and the lines")
	r = call(t, http.MethodGet, shared.gateway+"/api/v1/invoices", billing.Token, nil)
	require.Equal(t, http.StatusOK, r.Status)
	var list wire.InvoiceList
	require.NoError(t, json.Unmarshal(r.Raw, &list))
	require.Equal(t, inv.ID, list.Invoices[0].ID)
	require.Equal(t, wire.InvoiceOpen, list.Invoices[0].Status)

	// A viewer may not; another tenant gets a 404 for this invoice.
	r = call(t, http.MethodGet, shared.gateway+"/api/v1/invoices/upcoming", viewer.Token, nil)
	require.Equal(t, http.StatusForbidden, r.Status)
	r = call(t, http.MethodGet, shared.gateway+"/api/v1/plan", viewer.Token, nil)
	require.Equal(t, http.StatusForbidden, r.Status)
	_, other := shared.tenant(t)
	r = call(t, http.MethodGet, shared.gateway+"/api/v1/invoices/"+inv.ID, other.OwnerKey, nil)
	require.Equal(t, http.StatusNotFound, r.Status, "body: %s", r.Raw)
	r = call(t, http.MethodGet, shared.gateway+"/api/v1/invoices/upcoming", other.OwnerKey, nil)
	require.Equal(t, http.StatusOK, r.Status)
	var theirs wire.Invoice
	require.NoError(t, json.Unmarshal(r.Raw, &theirs))
	require.Equal(t, other.Tenant.ID, theirs.TenantID)
	require.Empty(t, theirs.Lines)
}

// sumOf is the quantity of meter in namespace over every stretch.
func sumOf(inv wire.Invoice, meter, ns string) int64 {
	var n int64
	for _, l := range inv.Lines {
		if l.Meter == meter && l.Namespace == ns {
			v, _ := l.Quantity.Int64()
			n += v
		}
	}
	return n
}

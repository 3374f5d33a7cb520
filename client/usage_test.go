package client_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/wire"
)

// The usage, plan and invoice methods ask for what the API serves, with
// the query the caller gave, and decode its answers: an invoice's
// quantities past 2^53 exactly, its CSV streamed as it comes, a refusal
// as the server's error.
func TestUsageAndInvoiceMethods(t *testing.T) {
	t.Parallel()
	type call struct{ path, accept string }
	var (
		mu    sync.Mutex
		calls []call
	)
	const big = "9007199254740993" // 2^53 + 1: a float64 would lose the 1
	invoice := `{"id":"inv_t_1_2026-10","tenant_id":"t_1","currency":"EUR","status":"closed",
		"period":{"start":"2026-10-01T00:00:00Z","end":"2026-11-01T00:00:00Z"},
		"lines":[{"meter":"storage_byte_hours","namespace":"emails","quantity":` + big + `,"quantity_unit":"byte_ms",
		"included_applied":0,"billable":` + big + `,"unit":1,"unit_price":0,"billed_units":0,"amount":0}],"total":155}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		calls = append(calls, call{r.URL.RequestURI(), r.Header.Get("Accept")})
		mu.Unlock()
		switch r.URL.Path {
		case "/api/v1/usage":
			_ = json.NewEncoder(w).Encode(wire.Usage{Granularity: r.URL.Query().Get("granularity"),
				Namespaces: []wire.NamespaceMeters{{Namespace: "emails", Totals: wire.UsageMeters{Executions: 3}}},
				Totals:     wire.UsageMeters{Executions: 3, APIRequests: 9}})
		case "/api/v1/plan":
			_ = json.NewEncoder(w).Encode(wire.TenantPlan{TenantID: "t_1", Plan: wire.Plan{Name: "free", Currency: "USD"}})
		case "/api/v1/invoices":
			_ = json.NewEncoder(w).Encode(wire.InvoiceList{Invoices: []wire.InvoiceSummary{{ID: "inv_t_1_2026-11", Status: "open"}, {ID: "inv_t_1_2026-10", Status: "closed"}}})
		case "/api/v1/invoices/upcoming", "/api/v1/invoices/inv_t_1_2026-10":
			_, _ = io.WriteString(w, invoice)
		case "/api/v1/invoices/inv_t_1_2026-10/csv":
			w.Header().Set("Content-Type", "text/csv; charset=utf-8")
			_, _ = io.WriteString(w, "invoice_id,period_start\ninv_t_1_2026-10,2026-10-01T00:00:00Z\n")
		default:
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusForbidden)
			_ = json.NewEncoder(w).Encode(wire.ErrorBody{Error: &wire.Error{Code: "forbidden", Message: "role viewer may not usage.read"}})
		}
	}))
	t.Cleanup(srv.Close)
	c := client.New(srv.URL, "key")
	t.Cleanup(c.CloseIdleConnections)
	ctx := context.Background()

	u, err := c.GetUsage(ctx, client.UsageQuery{})
	require.NoError(t, err)
	require.Equal(t, int64(9), u.Totals.APIRequests)
	from := time.Date(2026, 11, 5, 9, 30, 0, 0, time.FixedZone("CET", 3600))
	u, err = c.GetUsage(ctx, client.UsageQuery{From: from, To: from.Add(48 * time.Hour), Granularity: client.GranularityDay, Namespace: "emails"})
	require.NoError(t, err)
	require.Equal(t, "day", u.Granularity)
	require.Equal(t, "emails", u.Namespaces[0].Namespace)

	tp, err := c.GetPlan(ctx)
	require.NoError(t, err)
	require.Equal(t, "free", tp.Plan.Name)

	list, err := c.ListInvoices(ctx)
	require.NoError(t, err)
	require.Len(t, list, 2)
	require.Equal(t, "inv_t_1_2026-11", list[0].ID)

	inv, err := c.GetInvoice(ctx, "inv_t_1_2026-10")
	require.NoError(t, err)
	require.Equal(t, big, inv.Lines[0].Quantity.String())
	require.Equal(t, int64(155), inv.Total)
	up, err := c.UpcomingInvoice(ctx)
	require.NoError(t, err)
	require.Equal(t, inv, up)

	var buf bytes.Buffer
	n, err := c.InvoiceCSV(ctx, "inv_t_1_2026-10", &buf)
	require.NoError(t, err)
	require.Equal(t, int64(buf.Len()), n)
	require.Equal(t, "invoice_id,period_start\ninv_t_1_2026-10,2026-10-01T00:00:00Z\n", buf.String())

	_, err = c.GetInvoice(ctx, "inv/other")
	require.True(t, client.IsForbidden(err), "%v", err)
	require.ErrorContains(t, err, "may not usage.read")
	buf.Reset()
	_, err = c.InvoiceCSV(ctx, "inv_x", &buf)
	require.True(t, client.IsForbidden(err), "%v", err)
	require.Zero(t, buf.Len(), "an error body is not written as CSV")

	require.Equal(t, []call{
		{"/api/v1/usage", "application/json"},
		{"/api/v1/usage?from=2026-11-05T08%3A30%3A00Z&granularity=day&namespace=emails&to=2026-11-07T08%3A30%3A00Z", "application/json"},
		{"/api/v1/plan", "application/json"},
		{"/api/v1/invoices", "application/json"},
		{"/api/v1/invoices/inv_t_1_2026-10", "application/json"},
		{"/api/v1/invoices/upcoming", "application/json"},
		{"/api/v1/invoices/inv_t_1_2026-10/csv", "text/csv, application/json"},
		{"/api/v1/invoices/inv%2Fother", "application/json"},
		{"/api/v1/invoices/inv_x/csv", "text/csv, application/json"},
	}, calls)
}

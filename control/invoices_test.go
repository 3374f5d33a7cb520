package control

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/pki/pkitest"
	"github.com/jobbie/jobbie/wire"
)

func at(mon time.Month, d, h, min int) time.Time {
	return time.Date(2026, mon, d, h, min, 0, 0, time.UTC)
}

func i64(v int64) *int64 { return &v }

// invoiceWorld is a control node with tenant acme on plan pro from 25
// February 10:00 and on scale from 15 March 12:00, and a March ledger
// whose invoice was computed by hand (TestInvoiceArithmetic).
type invoiceWorld struct {
	cfg Config
	srv *Server
	clk *clockwork.FakeClock
	tid string
}

func newInvoiceWorld(t *testing.T) *invoiceWorld {
	t.Helper()
	ctx := context.Background()
	clk := clockwork.NewFakeClockAt(at(2, 25, 9, 30))
	cfg := testConfig(t, pkitest.New(t), noPulls, func(c *Config) { c.Clock = clk })
	srv := startServer(t, cfg)
	w := &invoiceWorld{cfg: cfg, srv: srv, clk: clk, tid: mustTenant(t, srv, "acme")}
	_, err := srv.PutPlan(ctx, wire.Plan{Name: "pro", Prices: map[string]wire.Price{
		"executions":         {Unit: 1000, Price: 5},
		"active_job_seconds": {Unit: 3600, Price: 20},
		"storage_byte_hours": {Unit: 1_000_000_000, Price: 1},
		"api_requests":       {Unit: 10000, Price: 3},
	}, Included: map[string]int64{"executions": 1500, "active_job_seconds": 60}}, true)
	require.NoError(t, err)
	_, err = srv.SetTenantPlan(ctx, w.tid, "pro")
	require.NoError(t, err)

	setClock(clk, at(3, 15, 11, 20))
	_, err = srv.PutPlan(ctx, wire.Plan{Name: "scale", Prices: map[string]wire.Price{
		"executions":         {Unit: 1000, Price: 4},
		"storage_byte_hours": {Unit: 1, Price: 3},
	}, Included: map[string]int64{"executions": 10000}}, true)
	require.NoError(t, err)
	_, err = srv.SetTenantPlan(ctx, w.tid, "scale")
	require.NoError(t, err)

	tid := w.tid
	put(t, srv, "s1", time.Time{},
		entry(tid, "alpha", at(2, 28, 23, 0), wire.ShardMeters{Executions: 999}), // February's
		entry(tid, "alpha", at(3, 2, 10, 0), wire.ShardMeters{Executions: 800, ActiveJobMs: 30_500}),
		entry(tid, "beta", at(3, 3, 5, 0), wire.ShardMeters{Executions: 1200, ActiveJobMs: 45_000}),
		entry(tid, "alpha", at(3, 20, 0, 0), wire.ShardMeters{Executions: 9500}),
		entry(tid, "beta", at(3, 21, 0, 0), wire.ShardMeters{Executions: 2000, StorageByteMs: 7_200_000_000_000_001}),
		entry(tid, "gamma", at(3, 22, 0, 0), wire.ShardMeters{StorageByteMs: 6_000_000_000_000_000_000}),
		entry(tid, "gamma", at(3, 22, 1, 0), wire.ShardMeters{StorageByteMs: 6_000_000_000_000_000_000}),
	)
	put(t, srv, "s2", time.Time{}, entry(tid, "beta", at(3, 3, 5, 0), wire.ShardMeters{Executions: 100}))
	require.NoError(t, recordAPIRequests(srv, tid, "gw_a", at(3, 2, 10, 0), 12000))
	require.NoError(t, recordAPIRequests(srv, tid, "gw_b", at(3, 2, 10, 0), 5))
	require.NoError(t, recordAPIRequests(srv, tid, "gw_a", at(3, 20, 0, 0), 7))
	setClock(clk, at(3, 25, 8, 0))
	return w
}

func (w *invoiceWorld) invoiceBytes(t *testing.T, srv *Server, month string) []byte {
	t.Helper()
	b, err := srv.Invoice(context.Background(), w.tid, "inv_"+w.tid+"_"+month)
	require.NoError(t, err)
	return b
}

func decodeInvoice(t *testing.T, b []byte) wire.Invoice {
	t.Helper()
	var inv wire.Invoice
	require.NoError(t, json.Unmarshal(b, &inv))
	return inv
}

type lineWant struct {
	meter, ns, plan                     string
	qty, applied, billable, units, unit string
	amount                              int64
}

// The March invoice, by hand. Pro (1–15 March 12:00): executions 800
// (alpha) and 1,300 (beta, two shards); 1,500 included go to alpha first
// (800) then beta (700), leaving 600 billable: one unit of 1,000 at 5.
// Active time 30.5 s and 45 s against 60 s included: beta bills 15.5 s,
// one unit of 3,600 s at 20. 12,005 api requests: 2 units of 10,000 at 3.
// Scale (from 15 March 12:00) includes 10,000 executions less the 2,100
// the month used before: 7,900 go to alpha's 9,500 (1,600 billable, 2
// units at 4), none to beta's 2,000 (2 units). Storage per byte-hour at
// 3: beta's 7.2e15+1 byte-ms is 2e9 byte-hours and 1 byte-ms, so
// 2,000,000,001 units; gamma's two hours sum past 2^63 byte-ms exactly,
// 1.2e19 / 3.6e6 rounds up to 3,333,333,333,334 units.
func TestInvoiceArithmetic(t *testing.T) {
	t.Parallel()
	w := newInvoiceWorld(t)
	inv := decodeInvoice(t, w.invoiceBytes(t, w.srv, "2026-03"))

	require.Equal(t, "inv_"+w.tid+"_2026-03", inv.ID)
	require.Equal(t, w.tid, inv.TenantID)
	require.Equal(t, wire.InvoicePeriod{Start: at(3, 1, 0, 0), End: at(4, 1, 0, 0)}, inv.Period)
	require.Equal(t, "USD", inv.Currency)
	require.Equal(t, wire.InvoiceOpen, inv.Status)
	require.Equal(t, []wire.InvoicePlan{
		{Name: "pro", Version: 1, Currency: "USD", From: at(3, 1, 0, 0), To: at(3, 15, 12, 0)},
		{Name: "scale", Version: 1, Currency: "USD", From: at(3, 15, 12, 0), To: at(4, 1, 0, 0)},
	}, inv.Plans)
	want := []lineWant{
		{"executions", "alpha", "pro", "800", "800", "0", "0", "1000", 0},
		{"executions", "beta", "pro", "1300", "700", "600", "1", "1000", 5},
		{"active_job_seconds", "alpha", "pro", "30500", "30500", "0", "0", "3600", 0},
		{"active_job_seconds", "beta", "pro", "45000", "29500", "15500", "1", "3600", 20},
		{"api_requests", "", "pro", "12005", "0", "12005", "2", "10000", 6},
		{"executions", "alpha", "scale", "9500", "7900", "1600", "2", "1000", 8},
		{"executions", "beta", "scale", "2000", "0", "2000", "2", "1000", 8},
		{"storage_byte_hours", "beta", "scale", "7200000000000001", "0", "7200000000000001", "2000000001", "1", 6_000_000_003},
		{"storage_byte_hours", "gamma", "scale", "12000000000000000000", "0", "12000000000000000000", "3333333333334", "1", 10_000_000_000_002},
		{"api_requests", "", "scale", "7", "0", "7", "0", "0", 0},
	}
	got := make([]lineWant, len(inv.Lines))
	for i, l := range inv.Lines {
		got[i] = lineWant{l.Meter, l.Namespace, l.Plan, l.Quantity.String(), l.IncludedApplied.String(), l.Billable.String(),
			l.BilledUnits.String(), strconv.FormatInt(l.Unit, 10), l.Amount}
	}
	require.Equal(t, want, got)
	require.Equal(t, "ms", inv.Lines[2].QuantityUnit)
	require.Equal(t, "byte_ms", inv.Lines[7].QuantityUnit)
	require.Equal(t, int64(3), inv.Lines[7].UnitPrice)
	require.Equal(t, int64(10_006_000_000_052), inv.Subtotal)
	require.Equal(t, inv.Subtotal, inv.Total)
	require.Equal(t, wire.InvoiceSource{LedgerHours: 6, LedgerEntries: 10, ClosedThrough: time.Time{}.UTC(), PlanChanges: 1}, inv.GeneratedFrom)

	// February: free for the hour the tenant was created in, then pro;
	// its 999 executions are within pro's included 1,500.
	feb := decodeInvoice(t, w.invoiceBytes(t, w.srv, "2026-02"))
	require.Equal(t, []wire.InvoicePlan{
		{Name: "free", Version: 1, Currency: "USD", From: at(2, 25, 9, 0), To: at(2, 25, 10, 0)},
		{Name: "pro", Version: 1, Currency: "USD", From: at(2, 25, 10, 0), To: at(3, 1, 0, 0)},
	}, feb.Plans)
	require.Len(t, feb.Lines, 1)
	require.Equal(t, json.Number("999"), feb.Lines[0].IncludedApplied)
	require.Zero(t, feb.Total)
}

// setClock moves a fake clock forward to t.
func setClock(clk *clockwork.FakeClock, t time.Time) { clk.Advance(t.Sub(clk.Now())) }

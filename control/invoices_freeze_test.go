package control

import (
	"context"
	"testing"
	"time"

	"github.com/cockroachdb/pebble"
	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/control/state"
	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/wire"
)

// Generating an invoice again gives the same bytes, on the same node and
// after control restarts (a new process reading the replicated state).
func TestInvoiceRegeneratesByteIdentical(t *testing.T) {
	t.Parallel()
	w := newInvoiceWorld(t)
	first := w.invoiceBytes(t, w.srv, "2026-03")
	require.Equal(t, first, w.invoiceBytes(t, w.srv, "2026-03"))
	up, err := w.srv.UpcomingInvoice(context.Background(), w.tid)
	require.NoError(t, err)
	require.Equal(t, first, up, "the running month is the upcoming invoice")
	require.NoError(t, w.srv.Stop())

	again := startServer(t, w.cfg)
	require.Equal(t, first, w.invoiceBytes(t, again, "2026-03"))
}

// A month freezes once every shard holding the tenant closed it and the
// api request counts settled; from then on its stored bytes are served,
// whatever reaches the ledger late.
func TestInvoiceFreezesAndStaysFrozen(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newInvoiceWorld(t)
	setClock(w.clk, at(4, 1, 0, 0).Add(30*time.Second))
	put(t, w.srv, "s1", at(4, 1, 0, 0))
	w.srv.FreezeInvoices(ctx)
	require.Equal(t, wire.InvoiceOpen, decodeInvoice(t, w.invoiceBytes(t, w.srv, "2026-03")).Status, "s2 has not closed March")

	put(t, w.srv, "s2", at(4, 1, 0, 0))
	w.srv.FreezeInvoices(ctx)
	require.Equal(t, wire.InvoiceOpen, decodeInvoice(t, w.invoiceBytes(t, w.srv, "2026-03")).Status, "api requests have not settled")

	setClock(w.clk, at(4, 1, 0, 1))
	open := decodeInvoice(t, w.invoiceBytes(t, w.srv, "2026-03"))
	w.srv.FreezeInvoices(ctx)
	frozen := w.invoiceBytes(t, w.srv, "2026-03")
	inv := decodeInvoice(t, frozen)
	require.Equal(t, wire.InvoiceClosed, inv.Status)
	require.True(t, inv.GeneratedFrom.ClosedThrough.Equal(at(4, 1, 0, 0)))
	open.Status = wire.InvoiceClosed
	require.Equal(t, open, inv, "frozen as generated")
	require.Equal(t, wire.InvoiceClosed, decodeInvoice(t, w.invoiceBytes(t, w.srv, "2026-02")).Status, "February with it")

	// A late ledger write for March (a shard's bucket read again, larger)
	// changes the ledger, not the invoice.
	put(t, w.srv, "s1", time.Time{}, entry(w.tid, "alpha", at(3, 20, 0, 0), wire.ShardMeters{Executions: 50_000}))
	require.NoError(t, recordAPIRequests(w.srv, w.tid, "gw_c", at(3, 31, 23, 0), 1_000_000))
	regenerated, err := viewValue(w.srv, func(r pebble.Reader) (wire.Invoice, error) { return state.GenerateInvoice(r, w.tid, at(3, 1, 0, 0)) })
	require.NoError(t, err)
	require.Greater(t, regenerated.Total, inv.Total, "the ledger did change")
	w.srv.FreezeInvoices(ctx)
	require.Equal(t, frozen, w.invoiceBytes(t, w.srv, "2026-03"))
	list, err := w.srv.Invoices(ctx, w.tid)
	require.NoError(t, err)
	require.Equal(t, []wire.InvoiceSummary{
		{ID: "inv_" + w.tid + "_2026-04", Period: wire.InvoicePeriod{Start: at(4, 1, 0, 0), End: at(5, 1, 0, 0)}, Status: "open", Currency: "USD"},
		{ID: "inv_" + w.tid + "_2026-03", Period: inv.Period, Status: "closed", Total: inv.Total, Currency: "USD"},
		{ID: "inv_" + w.tid + "_2026-02", Period: wire.InvoicePeriod{Start: at(2, 1, 0, 0), End: at(3, 1, 0, 0)}, Status: "closed", Currency: "USD"},
	}, list.Invoices)

	// A second freeze command for the month changes nothing either.
	stored, err := propose(ctx, w.srv, state.OpFreezeInvoice, &state.FreezeInvoiceCmd{TenantID: w.tid, Month: at(3, 1, 0, 0).Unix(), Invoice: []byte(`{}`)})
	require.NoError(t, err)
	require.False(t, stored)
	require.Equal(t, frozen, w.invoiceBytes(t, w.srv, "2026-03"))

	// And it survives a restart as stored.
	require.NoError(t, w.srv.Stop())
	require.Equal(t, frozen, w.invoiceBytes(t, startServer(t, w.cfg), "2026-03"))
}

func TestInvoiceIDsOfOtherTenantsAndMonthsAreNotFound(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newInvoiceWorld(t)
	other := mustTenant(t, w.srv, "other")
	for _, id := range []string{
		"inv_" + other + "_2026-03", // B's id asked as A
		"inv_" + w.tid + "_2026-01", // before the tenant
		"inv_" + w.tid + "_2026-04", // after the running month
		"inv_" + w.tid + "_2026-3", "inv_" + w.tid, "nonsense", "",
	} {
		_, err := w.srv.Invoice(ctx, w.tid, id)
		require.Equal(t, apierr.NotFound, apierr.CodeOf(err), "id %q", id)
	}
	_, err := w.srv.Invoice(ctx, unknownTID, "inv_"+unknownTID+"_2026-03")
	require.Equal(t, apierr.NotFound, apierr.CodeOf(err))
	b, err := w.srv.Invoice(ctx, other, "inv_"+other+"_2026-03")
	require.NoError(t, err)
	inv := decodeInvoice(t, b)
	require.Empty(t, inv.Lines, "B sees none of A's usage")
	require.Equal(t, "free", inv.Plans[0].Name)
}

// An edit of a plan applies from its own next hour: the invoice splits
// there and names both versions; a tenant's plan history keeps the
// version it was moved to.
func TestInvoiceSplitsAtAPlanEdit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newInvoiceWorld(t) // 25 March 08:00, on scale v1
	_, err := w.srv.PutPlan(ctx, wire.Plan{Name: "scale", Prices: map[string]wire.Price{"executions": {Unit: 1000, Price: 40}}}, false)
	require.NoError(t, err)
	put(t, w.srv, "s1", time.Time{}, entry(w.tid, "alpha", at(3, 26, 0, 0), wire.ShardMeters{Executions: 1000}))
	inv := decodeInvoice(t, w.invoiceBytes(t, w.srv, "2026-03"))
	require.Equal(t, []wire.InvoicePlan{
		{Name: "pro", Version: 1, Currency: "USD", From: at(3, 1, 0, 0), To: at(3, 15, 12, 0)},
		{Name: "scale", Version: 1, Currency: "USD", From: at(3, 15, 12, 0), To: at(3, 25, 9, 0)},
		{Name: "scale", Version: 2, Currency: "USD", From: at(3, 25, 9, 0), To: at(4, 1, 0, 0)},
	}, inv.Plans)
	last := inv.Lines[len(inv.Lines)-1]
	require.Equal(t, "executions", last.Meter)
	require.Equal(t, uint64(2), last.PlanVersion)
	require.Equal(t, "1000", last.Billable.String(), "v2 includes nothing")
	require.Equal(t, int64(40), last.Amount)

	tp, err := w.srv.TenantPlan(ctx, w.tid)
	require.NoError(t, err)
	require.Equal(t, uint64(1), tp.Plan.Version)
	require.Equal(t, uint64(2), tp.Next.Version)
	require.True(t, tp.NextFrom.Equal(at(3, 25, 9, 0)))
}

// Count quotas: namespaces and keys over the plan's limits are refused
// with 429 quota_exceeded naming the limit and the plan, from the hour
// the plan applies.
func TestCountQuotas(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newInvoiceWorld(t)
	_, err := w.srv.PutPlan(ctx, wire.Plan{Name: "tiny", Limits: wire.PlanLimits{MaxNamespaces: i64(2), MaxKeys: i64(2)}}, true)
	require.NoError(t, err)
	_, err = w.srv.SetTenantPlan(ctx, w.tid, "tiny")
	require.NoError(t, err)
	_, err = w.srv.CreateNamespace(ctx, w.tid, "one")
	require.NoError(t, err, "tiny applies from the next hour")
	_, err = w.srv.CreateNamespace(ctx, w.tid, "two")
	require.NoError(t, err)
	setClock(w.clk, at(3, 25, 9, 0))
	_, err = w.srv.CreateNamespace(ctx, w.tid, "three")
	requireQuota(t, err, "max_namespaces", "tiny")

	_, err = w.srv.CreateKey(ctx, w.tid, KeyRequest{Name: "k1", Role: "worker", Namespaces: []string{"one"}})
	require.NoError(t, err, "the owner key and this one")
	_, err = w.srv.CreateKey(ctx, w.tid, KeyRequest{Name: "k2", Role: "worker", Namespaces: []string{"one"}})
	requireQuota(t, err, "max_keys", "tiny")
	ns, err := w.srv.Namespaces(ctx, w.tid)
	require.NoError(t, err)
	require.Len(t, ns, 3, "default, one, two")
}

func requireQuota(t *testing.T, err error, limit, plan string) {
	t.Helper()
	var e *apierr.Error
	require.ErrorAs(t, err, &e)
	require.Equal(t, apierr.QuotaExceeded, e.Code)
	require.Contains(t, e.Message, limit)
	require.Contains(t, e.Message, `"`+plan+`"`)
}

// An invoice has one currency: a tenant on a priced plan is not moved to
// a priced plan of another currency; a plan without prices goes with any.
func TestSetPlanKeepsOneCurrency(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newInvoiceWorld(t) // on scale (USD, priced)
	_, err := w.srv.PutPlan(ctx, wire.Plan{Name: "euro", Currency: "EUR", Prices: map[string]wire.Price{"executions": {Unit: 1, Price: 1}}}, true)
	require.NoError(t, err)
	_, err = w.srv.SetTenantPlan(ctx, w.tid, "euro")
	require.Equal(t, apierr.Conflict, apierr.CodeOf(err))
	_, err = w.srv.SetTenantPlan(ctx, w.tid, "free")
	require.NoError(t, err, "free has no prices")
	_, err = w.srv.SetTenantPlan(ctx, w.tid, "euro")
	require.Equal(t, apierr.Conflict, apierr.CodeOf(err), "judged against scale, which stays this hour, not the pending free")
	setClock(w.clk, at(3, 25, 9, 0))
	_, err = w.srv.SetTenantPlan(ctx, w.tid, "euro")
	require.NoError(t, err, "on free now")
}

package billing

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/wire"
)

func hour(d, h int) time.Time { return time.Date(2026, 3, d, h, 0, 0, 0, time.UTC) }

func TestVersionAt(t *testing.T) {
	t.Parallel()
	vs := []PlanVersion{{Plan: wire.Plan{Version: 1}, From: hour(1, 0)}, {Plan: wire.Plan{Version: 2}, From: hour(10, 5)}}
	_, ok := VersionAt(vs, hour(1, 0).Add(-time.Hour))
	require.False(t, ok, "before the first version")
	v, _ := VersionAt(vs, hour(10, 4))
	require.Equal(t, uint64(1), v.Plan.Version)
	v, _ = VersionAt(vs, hour(10, 5))
	require.Equal(t, uint64(2), v.Plan.Version, "a version applies from its hour")
}

// The plan book: free until the first change, each change from its
// hour, and the version of the plan in effect then.
func TestBookAt(t *testing.T) {
	t.Parallel()
	pro := []PlanVersion{{Plan: wire.Plan{Name: "pro", Version: 1}, From: hour(1, 0)}, {Plan: wire.Plan{Name: "pro", Version: 2}, From: hour(20, 0)}}
	b := &Book{Tenant: "t", Created: hour(5, 9).Add(30 * time.Minute),
		History:  []HistoryEntry{{From: hour(5, 10), PlanChange: PlanChange{Plan: "pro"}}},
		Versions: map[string][]PlanVersion{FreePlan: {BuiltinFree}, "pro": pro}}
	p, err := b.At(hour(5, 9))
	require.NoError(t, err)
	require.Equal(t, FreePlan, p.Name)
	require.Equal(t, b.Created, p.Since)
	p, err = b.At(hour(21, 0))
	require.NoError(t, err)
	require.Equal(t, "pro", p.Name)
	require.Equal(t, uint64(2), p.Version.Plan.Version)
	b.Versions["pro"] = nil
	_, err = b.At(hour(21, 0))
	require.ErrorContains(t, err, "no version in effect")
}

// An invoice is a pure function of its rows: the same rows, the same
// invoice, priced per line and rounded up per unit.
func TestGenerateInvoiceFromRows(t *testing.T) {
	t.Parallel()
	plan := wire.Plan{Name: "pro", Version: 1, Currency: "EUR",
		Prices: map[string]wire.Price{"executions": {Unit: 1000, Price: 5}}, Included: map[string]int64{"executions": 500}}
	b := &Book{Tenant: "t_1", Created: hour(1, 0),
		History:  []HistoryEntry{{From: hour(1, 0), PlanChange: PlanChange{Plan: "pro"}}},
		Versions: map[string][]PlanVersion{FreePlan: {BuiltinFree}, "pro": {{Plan: plan, From: hour(1, 0)}}}}
	l := Ledger{Book: b,
		Usage: []UsageRow{{Namespace: "a", Hour: hour(2, 3), Shard: "s1", Meters: wire.ShardMeters{Executions: 700}},
			{Namespace: "b", Hour: hour(2, 4), Shard: "s1", Meters: wire.ShardMeters{Executions: 1200}}},
		APIRequests: []HourCount{{Hour: hour(2, 3), Count: 9}},
		Placed:      []string{"s1"},
		Cursors:     map[string]time.Time{"s1": hour(3, 0)}}
	inv, err := GenerateInvoice(l, hour(1, 0))
	require.NoError(t, err)
	again, err := GenerateInvoice(l, hour(1, 0))
	require.NoError(t, err)
	require.Equal(t, inv, again)
	require.Equal(t, "inv_t_1_2026-03", inv.ID)
	require.Equal(t, "EUR", inv.Currency)
	require.Equal(t, hour(3, 0), inv.GeneratedFrom.ClosedThrough)
	require.Equal(t, 3, inv.GeneratedFrom.LedgerEntries)
	// a: 700, 500 included, 200 billable → 1 unit of 1000 at 5;
	// b: 1200, nothing left included → 2 units at 5.
	require.Equal(t, int64(15), inv.Total)
	require.Len(t, inv.Lines, 3, "two execution lines and the api requests")
}

// Usage: namespaces' buckets where they used something, the tenant's for
// every period, api requests in the tenant's only, and a bucket
// incomplete until every holding shard's cursor passed it.
func TestUsageFromRows(t *testing.T) {
	t.Parallel()
	q := wire.UsageQuery{From: hour(2, 0), To: hour(2, 3), Granularity: "hour"}
	u := Usage(q, hour(5, 0), UsageLedger{
		Usage:       []UsageRow{{Namespace: "a", Hour: hour(2, 1), Shard: "s1", Meters: wire.ShardMeters{Executions: 4, ActiveJobMs: 1500}}},
		Placed:      map[string]string{"a": "s1", "b": "s2"},
		Cursors:     map[string]time.Time{"s1": hour(2, 2), "s2": hour(9, 0)},
		APIRequests: []HourCount{{Hour: hour(2, 0), Count: 3}},
	})
	require.Len(t, u.Namespaces, 1, "b used nothing")
	require.Equal(t, int64(4), u.Totals.Executions)
	require.Equal(t, int64(3), u.Totals.APIRequests)
	require.InDelta(t, 1.5, u.Totals.ActiveJobSeconds, 1e-9)
	require.Len(t, u.Tenant, 3)
	require.False(t, u.Tenant[1].Incomplete)
	require.True(t, u.Tenant[2].Incomplete, "s1 has not closed 02:00")
}

// Push and webhook deliveries are priced like the other meters: each
// namespace's line nets the monthly included amount in name order, and
// usage shows them per namespace and in totals.
func TestDeliveryMetersPricedAndShown(t *testing.T) {
	t.Parallel()
	plan := wire.Plan{Name: "pro", Version: 1, Currency: "USD",
		Prices:   map[string]wire.Price{"push_deliveries": {Unit: 100, Price: 7}, "webhook_deliveries": {Unit: 10, Price: 1}},
		Included: map[string]int64{"push_deliveries": 50}}
	require.NoError(t, ValidatePlan(&plan))
	b := &Book{Tenant: "t_1", Created: hour(1, 0),
		History:  []HistoryEntry{{From: hour(1, 0), PlanChange: PlanChange{Plan: "pro"}}},
		Versions: map[string][]PlanVersion{FreePlan: {BuiltinFree}, "pro": {{Plan: plan, From: hour(1, 0)}}}}
	rows := []UsageRow{
		{Namespace: "a", Hour: hour(2, 3), Shard: "s1", Meters: wire.ShardMeters{PushDeliveries: 120, WebhookDeliveries: 25}},
		{Namespace: "b", Hour: hour(2, 4), Shard: "s1", Meters: wire.ShardMeters{PushDeliveries: 30}}}
	inv, err := GenerateInvoice(Ledger{Book: b, Usage: rows, Placed: []string{"s1"}, Cursors: map[string]time.Time{"s1": hour(3, 0)}}, hour(1, 0))
	require.NoError(t, err)
	type line struct{ meter, ns, unit, qty, applied, billed string }
	var got []line
	for _, l := range inv.Lines {
		got = append(got, line{l.Meter, l.Namespace, l.QuantityUnit, l.Quantity.String(), l.IncludedApplied.String(), l.BilledUnits.String()})
	}
	// a: 120 push, 50 included, 70 billable → 1 unit of 100 at 7; b: 30,
	// nothing left → 1 unit; a's 25 webhook attempts → 3 units of 10 at 1.
	require.Equal(t, []line{
		{"push_deliveries", "a", "deliveries", "120", "50", "1"},
		{"push_deliveries", "b", "deliveries", "30", "0", "1"},
		{"webhook_deliveries", "a", "attempts", "25", "0", "3"},
	}, got)
	require.Equal(t, int64(7+7+3), inv.Total)

	u := Usage(wire.UsageQuery{From: hour(2, 0), To: hour(3, 0), Granularity: "hour"}, hour(5, 0), UsageLedger{
		Usage: rows, Placed: map[string]string{"a": "s1", "b": "s1"}, Cursors: map[string]time.Time{"s1": hour(3, 0)}})
	require.Equal(t, int64(150), u.Totals.PushDeliveries)
	require.Equal(t, int64(25), u.Totals.WebhookDeliveries)
	require.Equal(t, int64(120), u.Namespaces[0].Totals.PushDeliveries)
}

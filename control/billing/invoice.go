package billing

import (
	"encoding/json"
	"fmt"
	"math/big"
	"sort"
	"strings"
	"time"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/wire"
)

// Invoice generation: a pure function of the ledger and the plan history
// (no clock, no map order), so the same state gives the same bytes.
//
// Rules:
//   - The period is a UTC month, split into stretches where one version of
//     one plan applied (plan changes and plan edits start at whole hours).
//   - A line is one meter of one namespace in one stretch (api requests:
//     one per stretch, no namespace), with its quantity in the meter's
//     exact base unit (ms, byte-ms, or a count).
//   - Included amounts are a monthly allowance per tenant per meter. A
//     stretch's allowance is its plan's included amount less everything
//     the month used of that meter in earlier stretches (not below 0); it
//     is applied to the stretch's namespaces in name order.
//   - A line's billable quantity is priced in whole units of the plan's
//     Unit, rounded up: amount = ceil(billable / (unit × base)) × price,
//     in integers (math/big), so 1 ms of 1 job-hour priced per 3,600 s
//     is one unit. Rounding is per line.
//   - The invoice's currency is that of the last stretch's plan; moving a
//     tenant between priced plans of two currencies is refused.

// InvoiceMonth is the start of the UTC month t is in.
func InvoiceMonth(t time.Time) time.Time {
	y, m, _ := t.UTC().Date()
	return time.Date(y, m, 1, 0, 0, 0, 0, time.UTC)
}

// InvoiceID is the id of tenant tid's invoice of the month starting at month.
func InvoiceID(tid string, m time.Time) string { return "inv_" + tid + "_" + month(m) }

// ParseInvoiceID reads the month of an invoice id of tenant tid; an id of
// another tenant is not one.
func ParseInvoiceID(tid, id string) (time.Time, bool) {
	rest, ok := strings.CutPrefix(id, "inv_"+tid+"_")
	if !ok {
		return time.Time{}, false
	}
	m, err := time.Parse("2006-01", rest)
	if err != nil || month(m) != rest {
		return time.Time{}, false
	}
	return m, true
}

// stretch is a part of the period on one plan version.
type stretch struct {
	name     string
	version  PlanVersion
	from, to time.Time
}

// lineKey is one line's place: stretch, meter (index in meters), namespace.
type lineKey struct {
	stretch, meter int
	ns             string
}

// UsageRow is one ledger entry: a shard's meters of a namespace in an hour.
type UsageRow struct {
	Namespace string
	Hour      time.Time
	Shard     string
	Meters    wire.ShardMeters
}

// HourCount is a tenant's api requests in an hour, as one gateway counted
// them.
type HourCount struct {
	Hour  time.Time
	Count int64
}

// Ledger is what an invoice of a month is made of, read by the caller
// (state.Ledger): the tenant's plan book, its ledger entries and api
// request counts of the month in key order, the shards its namespaces are
// placed on, and every shard's pull cursor.
type Ledger struct {
	Book        *Book
	Usage       []UsageRow
	APIRequests []HourCount
	Placed      []string
	Cursors     map[string]time.Time
}

// GenerateInvoice is the tenant's invoice of the month starting at month,
// status open.
func GenerateInvoice(l Ledger, month time.Time) (wire.Invoice, error) {
	start, end := month, month.AddDate(0, 1, 0)
	b, tid := l.Book, l.Book.Tenant
	stretches, err := b.stretches(start, end)
	if err != nil {
		return wire.Invoice{}, err
	}
	// idx is the stretch of hour h; usage of an hour before the tenant's
	// creation (none should exist) goes to the first.
	idx := func(h time.Time) int {
		return min(sort.Search(len(stretches), func(i int) bool { return stretches[i].to.After(h) }), len(stretches)-1)
	}

	qty := map[lineKey]*big.Int{}
	add := func(k lineKey, v int64) {
		if v == 0 {
			return
		}
		if qty[k] == nil {
			qty[k] = new(big.Int)
		}
		qty[k].Add(qty[k], big.NewInt(v))
	}
	hours := map[time.Time]bool{}
	entries := 0
	shards := map[string]bool{}
	for _, u := range l.Usage {
		entries++
		hours[u.Hour] = true
		shards[u.Shard] = true
		s := idx(u.Hour)
		for i, v := range shardMeterValues(u.Meters) {
			add(lineKey{s, i, u.Namespace}, v)
		}
	}
	apiMeter := len(meters) - 1
	for _, c := range l.APIRequests {
		entries++
		hours[c.Hour] = true
		add(lineKey{idx(c.Hour), apiMeter, ""}, c.Count)
	}
	for _, sh := range l.Placed {
		shards[sh] = true
	}

	closed := ClosedUntil(shards, l.Cursors)
	if end.Before(closed) {
		closed = end
	}
	inv := wire.Invoice{
		ID: InvoiceID(tid, month), TenantID: tid, Period: wire.InvoicePeriod{Start: start, End: end},
		Currency: stretches[len(stretches)-1].version.Plan.Currency, Status: wire.InvoiceOpen,
		Plans: make([]wire.InvoicePlan, len(stretches)), Lines: []wire.InvoiceLine{},
		GeneratedFrom: wire.InvoiceSource{
			LedgerHours: len(hours), LedgerEntries: entries, ClosedThrough: closed.UTC(),
			PlanChanges: len(stretches) - 1,
		},
	}
	for i, s := range stretches {
		inv.Plans[i] = wire.InvoicePlan{Name: s.name, Version: s.version.Plan.Version, Currency: s.version.Plan.Currency, From: s.from, To: s.to}
	}
	lines, subtotal, err := priceLines(stretches, qty)
	if err != nil {
		return wire.Invoice{}, err
	}
	inv.Lines, inv.Subtotal, inv.Total = lines, subtotal, subtotal
	return inv, nil
}

// stretches splits [start, end) into runs of hours on one plan version;
// the first month of a tenant starts at the hour it was created.
func (b *Book) stretches(start, end time.Time) ([]stretch, error) {
	from := start
	if c := b.Created.UTC().Truncate(time.Hour); c.After(from) && c.Before(end) {
		from = c
	}
	var out []stretch
	for h := from; h.Before(end); h = h.Add(time.Hour) {
		p, err := b.At(h)
		if err != nil {
			return nil, err
		}
		if n := len(out); n > 0 && out[n-1].name == p.Name && out[n-1].version.Plan.Version == p.Version.Plan.Version {
			out[n-1].to = h.Add(time.Hour)
			continue
		}
		out = append(out, stretch{name: p.Name, version: p.Version, from: h, to: h.Add(time.Hour)})
	}
	if len(out) == 0 {
		return nil, apierr.New(apierr.NotFound, "the tenant did not exist in %s", month(start))
	}
	return out, nil
}

// month is how an invoice id names its month: "2006-01", UTC.
func month(t time.Time) string { return t.UTC().Format("2006-01") }

// shardMeterValues are a shard's meters in the order of meters (api
// requests, which shards do not count, left out).
func shardMeterValues(m wire.ShardMeters) []int64 {
	return []int64{m.JobsEnqueued, m.Executions, m.JobsCompleted, m.JobsFailed, m.JobsDead, m.ActiveJobMs, m.StorageByteMs,
		m.PushDeliveries, m.WebhookDeliveries, m.AIInputTokens, m.AIOutputTokens, m.AICacheReadTokens, m.AICacheWriteTokens, m.AICostNanos}
}

// priceLines nets the included amounts and prices every line (see the
// rules above), in stretch, meter, namespace order.
func priceLines(stretches []stretch, qty map[lineKey]*big.Int) ([]wire.InvoiceLine, int64, error) {
	byPlace := map[[2]int][]string{} // (stretch, meter) → namespaces with a quantity
	for k := range qty {
		p := [2]int{k.stretch, k.meter}
		byPlace[p] = append(byPlace[p], k.ns)
	}
	used := make([]*big.Int, len(meters))
	for i := range used {
		used[i] = new(big.Int)
	}
	zero := new(big.Int)
	subtotal := new(big.Int)
	lines := []wire.InvoiceLine{}
	for si, s := range stretches {
		plan := s.version.Plan
		for mi, m := range meters {
			nss := byPlace[[2]int{si, mi}]
			if len(nss) == 0 {
				continue
			}
			sort.Strings(nss)
			base := big.NewInt(m.base)
			left := new(big.Int).Mul(big.NewInt(plan.Included[m.name]), base)
			left.Sub(left, used[mi])
			if left.Sign() < 0 {
				left.Set(zero)
			}
			price, priced := plan.Prices[m.name]
			for _, ns := range nss {
				q := qty[lineKey{si, mi, ns}]
				applied := new(big.Int).Set(q)
				if applied.Cmp(left) > 0 {
					applied.Set(left)
				}
				left.Sub(left, applied)
				used[mi].Add(used[mi], q)
				billable := new(big.Int).Sub(q, applied)
				line := wire.InvoiceLine{
					Meter: m.name, Namespace: ns, Plan: s.name, PlanVersion: plan.Version, From: s.from, To: s.to,
					Quantity: number(q), QuantityUnit: m.baseUnit, IncludedApplied: number(applied), Billable: number(billable),
					BilledUnits: "0",
				}
				if priced {
					units := ceilDiv(billable, new(big.Int).Mul(big.NewInt(price.Unit), base))
					amount := new(big.Int).Mul(units, big.NewInt(price.Price))
					if !amount.IsInt64() {
						return nil, 0, fmt.Errorf("control: invoice line %s/%s amount %s overflows", m.name, ns, amount)
					}
					line.Unit, line.UnitPrice, line.BilledUnits, line.Amount = price.Unit, price.Price, number(units), amount.Int64()
					subtotal.Add(subtotal, amount)
				}
				lines = append(lines, line)
			}
		}
	}
	if !subtotal.IsInt64() {
		return nil, 0, fmt.Errorf("control: invoice subtotal %s overflows", subtotal)
	}
	return lines, subtotal.Int64(), nil
}

// ceilDiv is ⌈a / b⌉ for a ≥ 0, b > 0.
func ceilDiv(a, b *big.Int) *big.Int {
	q, r := new(big.Int).QuoRem(a, b, new(big.Int))
	if r.Sign() > 0 {
		q.Add(q, big.NewInt(1))
	}
	return q
}

func number(v *big.Int) json.Number { return json.Number(v.String()) }

package billing

import (
	"sort"
	"time"

	"github.com/jobbie/jobbie/wire"
)

// APIRequestsSettle is how long after an hour ends its api request counts
// are taken as final: gateways push every few seconds, and their clocks
// may be a little off.
const APIRequestsSettle = time.Minute

// nsUsage is what the ledger holds of one namespace in the range.
type nsUsage struct {
	periods map[int]*meterSums
	shards  map[string]bool // shards holding it: with entries in the range, and its placement
	until   time.Time       // every period ending by then is closed on all of them
}

// allClosed is ClosedUntil of no shard at all.
var allClosed = time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)

// ClosedUntil is the earliest cursor of shards: the hours before it are
// closed on every one of them (none, for a shard never read).
func ClosedUntil(shards map[string]bool, cursors map[string]time.Time) time.Time {
	until := allClosed
	for sh := range shards {
		if c := cursors[sh]; c.Before(until) { // zero when never read
			until = c
		}
	}
	return until
}

// FormerShard is a shard a namespace was moved away from, and when the
// move finished there (nil: not yet).
type FormerShard struct {
	Shard    string
	Finished *time.Time
}

// bounds reports whether the former shard, read up to cursor, may still
// hold meters of the namespace not in the ledger: until its cursor passes
// the hour the move finished in (it counts nothing there after).
func (f FormerShard) bounds(cursor time.Time) bool {
	return f.Finished == nil || !cursor.After(f.Finished.Truncate(time.Hour))
}

// meterSums are exact integer sums; the floats of wire.UsageMeters are
// derived from them only when shown, so totals carry no rounding.
type meterSums struct {
	enqueued, executions, completed, failed, dead, activeMs, storageByteMs, pushDeliveries, webhookDeliveries, apiRequests int64
	aiInput, aiOutput, aiCacheRead, aiCacheWrite, aiCostNanos                                                              int64
}

func (m *meterSums) addShard(s wire.ShardMeters) {
	m.add(meterSums{enqueued: s.JobsEnqueued, executions: s.Executions, completed: s.JobsCompleted,
		failed: s.JobsFailed, dead: s.JobsDead, activeMs: s.ActiveJobMs, storageByteMs: s.StorageByteMs,
		pushDeliveries: s.PushDeliveries, webhookDeliveries: s.WebhookDeliveries,
		aiInput: s.AIInputTokens, aiOutput: s.AIOutputTokens, aiCacheRead: s.AICacheReadTokens, aiCacheWrite: s.AICacheWriteTokens,
		aiCostNanos: s.AICostNanos})
}

func (m *meterSums) add(o meterSums) {
	m.enqueued += o.enqueued
	m.executions += o.executions
	m.completed += o.completed
	m.failed += o.failed
	m.dead += o.dead
	m.activeMs += o.activeMs
	m.storageByteMs += o.storageByteMs
	m.pushDeliveries += o.pushDeliveries
	m.webhookDeliveries += o.webhookDeliveries
	m.apiRequests += o.apiRequests
	m.aiInput += o.aiInput
	m.aiOutput += o.aiOutput
	m.aiCacheRead += o.aiCacheRead
	m.aiCacheWrite += o.aiCacheWrite
	m.aiCostNanos += o.aiCostNanos
}

func (m meterSums) view() wire.UsageMeters {
	return wire.UsageMeters{
		JobsEnqueued: m.enqueued, Executions: m.executions, JobsCompleted: m.completed, JobsFailed: m.failed,
		JobsDead: m.dead, ActiveJobSeconds: float64(m.activeMs) / 1e3, StorageByteHours: float64(m.storageByteMs) / 3.6e6,
		PushDeliveries: m.pushDeliveries, WebhookDeliveries: m.webhookDeliveries, APIRequests: m.apiRequests,
		AIInputTokens: m.aiInput, AIOutputTokens: m.aiOutput, AICacheReadTokens: m.aiCacheRead, AICacheWriteTokens: m.aiCacheWrite,
		AICostUSD: aiCostView(m.aiCostNanos),
	}
}

// aiCostView is the exact cost as UsageMeters shows it: left out when zero.
func aiCostView(nanos int64) string {
	if nanos == 0 {
		return ""
	}
	return wire.FormatCostUSD(nanos)
}

// SortedKeys is m's keys in order.
func SortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// UsageLedger is what a usage answer is made of, read by the caller
// (state.UsageLedger): the tenant's ledger entries of the query's range
// (of its namespace only, when it names one) in key order, the shards its
// namespaces (that one) are placed on, by namespace, every shard's pull
// cursor, the shards its namespaces were moved away from by moves that
// switched and had not finished before the range, and its api request
// counts of the range (none asked for a namespace).
type UsageLedger struct {
	Usage       []UsageRow
	Placed      map[string]string
	Cursors     map[string]time.Time
	Formers     map[string][]FormerShard
	APIRequests []HourCount
}

// Usage answers a tenant's usage for q at now: each namespace's buckets
// (only the periods it used something in) and totals, the tenant's
// buckets (every period of the range: the namespaces plus api requests,
// which gateways count per tenant) and totals. A bucket is incomplete
// while its period is not closed for every shard holding the namespace
// (for the tenant's, any namespace of the tenant; a shard it was moved
// away from counts until its cursor passes the move's finish), or, for
// api requests, until APIRequestsSettle after it ends. With a namespace,
// the answer is that namespace's alone (listed even when it used
// nothing), api requests left out.
func Usage(q wire.UsageQuery, now time.Time, l UsageLedger) wire.Usage {
	unit := q.Unit()
	n := int(q.To.Sub(q.From) / unit)
	data := map[string]*nsUsage{}
	get := func(ns string) *nsUsage {
		if u, ok := data[ns]; ok {
			return u
		}
		u := &nsUsage{periods: map[int]*meterSums{}, shards: map[string]bool{}}
		data[ns] = u
		return u
	}
	for _, e := range l.Usage {
		u := get(e.Namespace)
		u.shards[e.Shard] = true
		i := int(e.Hour.Sub(q.From) / unit)
		if u.periods[i] == nil {
			u.periods[i] = &meterSums{}
		}
		u.periods[i].addShard(e.Meters)
	}
	listed := map[string]bool{}
	for ns := range data {
		listed[ns] = true
	}
	for ns, shard := range l.Placed {
		get(ns).shards[shard] = true
	}
	if q.Namespace != "" {
		listed[q.Namespace] = true
	}
	// A period is closed for a namespace when it ends at or before every
	// holding shard's cursor; for the tenant, every namespace's.
	tenantUntil := allClosed
	for ns, u := range data {
		u.until = ClosedUntil(u.shards, l.Cursors)
		for _, f := range l.Formers[ns] {
			if c := l.Cursors[f.Shard]; !u.shards[f.Shard] && f.bounds(c) && c.Before(u.until) {
				u.until = c
			}
		}
		if u.until.Before(tenantUntil) {
			tenantUntil = u.until
		}
	}

	out := wire.Usage{From: q.From, To: q.To, Granularity: q.Granularity, Namespaces: []wire.NamespaceMeters{}}
	tenant := make([]meterSums, n)
	var totals meterSums
	for _, ns := range SortedKeys(listed) {
		u := data[ns]
		nm := wire.NamespaceMeters{Namespace: ns, Buckets: []wire.UsageBucketView{}}
		var nt meterSums
		for i := range n {
			m := u.periods[i]
			if m == nil {
				continue
			}
			start := q.From.Add(time.Duration(i) * unit)
			nm.Buckets = append(nm.Buckets, wire.UsageBucketView{Start: start, Meters: m.view(), Incomplete: start.Add(unit).After(u.until)})
			nt.add(*m)
			tenant[i].add(*m)
		}
		nm.Totals = nt.view()
		totals.add(nt)
		out.Namespaces = append(out.Namespaces, nm)
	}
	for _, c := range l.APIRequests {
		i := int(c.Hour.Sub(q.From) / unit)
		if i < 0 || i >= len(tenant) {
			continue // the key bounds keep every hour in range; this keeps a bad key harmless
		}
		tenant[i].apiRequests += c.Count
		totals.apiRequests += c.Count
	}
	out.Tenant = make([]wire.UsageBucketView, n)
	for i := range n {
		start := q.From.Add(time.Duration(i) * unit)
		end := start.Add(unit)
		done := !end.After(tenantUntil) && (q.Namespace != "" || !end.Add(APIRequestsSettle).After(now))
		out.Tenant[i] = wire.UsageBucketView{Start: start, Meters: tenant[i].view(), Incomplete: !done}
	}
	out.Totals = totals.view()
	return out
}

package control

import (
	"context"
	"encoding/json"
	"sort"
	"time"

	"github.com/cockroachdb/pebble"

	"github.com/jobbie/jobbie/control/internal/layout"
	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// Reading the ledger: GET /api/v1/usage, served by gateways through
// control's GET /internal/v1/tenants/{tid}/usage.

// UsageQuery is a checked usage query (wire.ParseUsageQuery).
type UsageQuery = wire.UsageQuery

// ParseUsageQuery is wire.ParseUsageQuery with the namespace checked too:
// a bad one is a 400 naming the field.
func ParseUsageQuery(now time.Time, from, to, granularity, namespace string) (UsageQuery, error) {
	if namespace != "" {
		if err := tenancy.ValidateNamespace(namespace); err != nil {
			return UsageQuery{}, apierr.Field("namespace", "%v", err)
		}
	}
	q, err := wire.ParseUsageQuery(now, from, to, granularity)
	if err != nil {
		return UsageQuery{}, apierr.Invalid(err)
	}
	q.Namespace = namespace
	return q, nil
}

// apiRequestsSettle is how long after an hour ends its api request counts
// are taken as final: gateways push every few seconds, and their clocks
// may be a little off.
const apiRequestsSettle = time.Minute

// Usage answers tenant tid's usage for q: each namespace's buckets (only
// the periods it used something in) and totals, the tenant's buckets
// (every period of the range: the namespaces plus api requests, which
// gateways count per tenant) and totals. A bucket is incomplete while
// its period is not closed for every shard holding the namespace (for the
// tenant's, any namespace of the tenant; a shard it was moved away from
// counts until its cursor passes the move's finish), or, for api requests, until
// apiRequestsSettle after it ends. With a namespace, the answer is that
// namespace's alone, api requests left out; a namespace that neither
// exists nor ever used anything is not found.
func (s *Server) Usage(ctx context.Context, tid string, q UsageQuery) (wire.Usage, error) {
	now := s.cfg.Clock.Now()
	return viewValue(s, func(r pebble.Reader) (wire.Usage, error) { return readUsage(r, tid, q, now) })
}

// nsUsage is what the ledger holds of one namespace in the range.
type nsUsage struct {
	periods map[int]*meterSums
	shards  map[string]bool // shards holding it: with entries in the range, and its placement
	until   time.Time       // every period ending by then is closed on all of them
}

// allClosed is closedUntil of no shard at all.
var allClosed = time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)

// closedUntil is the earliest cursor of shards: the hours before it are
// closed on every one of them (none, for a shard never read).
func closedUntil(shards map[string]bool, cursors map[string]time.Time) time.Time {
	until := allClosed
	for sh := range shards {
		until = minTime(until, cursors[sh]) // zero when never read
	}
	return until
}

func readUsage(r pebble.Reader, tid string, q UsageQuery, now time.Time) (wire.Usage, error) {
	if _, err := findTenant(r, tid); err != nil {
		return wire.Usage{}, err
	}
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
	err := scanUsage(r, tid, q.Namespace, q.From, q.To, func(ns string, hour time.Time, shard string, m wire.ShardMeters) {
		u := get(ns)
		u.shards[shard] = true
		i := int(hour.Sub(q.From) / unit)
		if u.periods[i] == nil {
			u.periods[i] = &meterSums{}
		}
		u.periods[i].addShard(m)
	})
	if err != nil {
		return wire.Usage{}, err
	}
	listed := map[string]bool{}
	for ns := range data {
		listed[ns] = true
	}
	placed, err := listNamespaces(r, tid)
	if err != nil {
		return wire.Usage{}, err
	}
	for _, ns := range placed {
		if q.Namespace == "" || ns.Name == q.Namespace {
			get(ns.Name).shards[ns.ShardID] = true
		}
	}
	if q.Namespace != "" {
		if _, ok := data[q.Namespace]; !ok {
			if n, err := count(r, layout.NamespaceUsage(tid, q.Namespace)); err != nil || n == 0 {
				return wire.Usage{}, orNotFound(err, q.Namespace)
			}
		}
		listed[q.Namespace] = true
	}
	cursors, err := loadPullCursors(r)
	if err != nil {
		return wire.Usage{}, err
	}
	// A period is closed for a namespace when it ends at or before every
	// holding shard's cursor; for the tenant, every namespace's.
	formers, err := movedFrom(r, tid, q)
	if err != nil {
		return wire.Usage{}, err
	}
	tenantUntil := allClosed
	for ns, u := range data {
		u.until = closedUntil(u.shards, cursors)
		for _, f := range formers[ns] {
			if c := cursors[f.shard]; !u.shards[f.shard] && f.bounds(c) {
				u.until = minTime(u.until, c)
			}
		}
		tenantUntil = minTime(tenantUntil, u.until)
	}

	out := wire.Usage{From: q.From, To: q.To, Granularity: q.Granularity, Namespaces: []wire.NamespaceMeters{}}
	tenant := make([]meterSums, n)
	var totals meterSums
	for _, ns := range sortedKeys(listed) {
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
	if q.Namespace == "" {
		if err := addAPIRequests(r, tid, q, tenant, &totals); err != nil {
			return wire.Usage{}, err
		}
	}
	out.Tenant = make([]wire.UsageBucketView, n)
	for i := range n {
		start := q.From.Add(time.Duration(i) * unit)
		end := start.Add(unit)
		done := !end.After(tenantUntil) && (q.Namespace != "" || !end.Add(apiRequestsSettle).After(now))
		out.Tenant[i] = wire.UsageBucketView{Start: start, Meters: tenant[i].view(), Incomplete: !done}
	}
	out.Totals = totals.view()
	return out, nil
}

// formerShard is a shard a namespace was moved away from, and when the
// move finished there (nil: not yet).
type formerShard struct {
	shard    string
	finished *time.Time
}

// bounds reports whether the former shard, read up to cursor, may still
// hold meters of the namespace not in the ledger: until its cursor passes
// the hour the move finished in (it counts nothing there after).
func (f formerShard) bounds(cursor time.Time) bool {
	return f.finished == nil || !cursor.After(f.finished.Truncate(time.Hour))
}

// movedFrom lists, by namespace, the shards tenant tid's namespaces were
// moved away from by moves that switched and had not finished before
// q.From: hours there may not be pulled yet.
func movedFrom(r pebble.Reader, tid string, q UsageQuery) (map[string][]formerShard, error) {
	moves, err := listMoves(r)
	if err != nil {
		return nil, err
	}
	out := map[string][]formerShard{}
	for _, m := range moves {
		switch {
		case m.TenantID != tid || (q.Namespace != "" && m.Namespace != q.Namespace):
		case m.State != wire.MoveSwitched && m.State != wire.MoveCompleted:
		case m.FinishedAt != nil && m.FinishedAt.Before(q.From):
		default:
			out[m.Namespace] = append(out[m.Namespace], formerShard{shard: m.FromShard, finished: m.FinishedAt})
		}
	}
	return out, nil
}

func orNotFound(err error, ns string) error {
	if err != nil {
		return err
	}
	return apierr.New(apierr.NotFound, "namespace %q not found", ns)
}

// scanUsage calls each with every ledger entry of tenant tid (of
// namespace only, when set) of an hour in [from, to), skipping the hours
// outside by seeking rather than reading them.
func scanUsage(r pebble.Reader, tid, only string, from, to time.Time, each func(ns string, hour time.Time, shard string, m wire.ShardMeters)) error {
	prefix := layout.TenantUsage(tid)
	if only != "" {
		prefix = layout.NamespaceUsage(tid, only)
	}
	it, err := r.NewIter(&pebble.IterOptions{LowerBound: prefix, UpperBound: layout.PrefixEnd(prefix)})
	if err != nil {
		return err
	}
	fromH, toH := layout.Hour(from), layout.Hour(to)
	for valid := it.First(); valid; {
		ns, hour, shard, ok := layout.UsageParts(tid, it.Key())
		switch {
		case !ok:
			valid = it.Next()
		case hour < fromH:
			valid = it.SeekGE(layout.NamespaceUsageFrom(tid, ns, from))
		case hour >= toH:
			valid = it.SeekGE(layout.PrefixEnd(layout.NamespaceUsage(tid, ns)))
		default:
			var m wire.ShardMeters
			h, err := layout.ParseHour(hour)
			if err == nil {
				err = json.Unmarshal(it.Value(), &m)
			}
			if err != nil {
				_ = it.Close()
				return err
			}
			each(ns, h, shard, m)
			valid = it.Next()
		}
	}
	return it.Close()
}

// addAPIRequests adds tenant tid's api request counts of [q.From, q.To)
// to its buckets and totals.
func addAPIRequests(r pebble.Reader, tid string, q UsageQuery, tenant []meterSums, totals *meterSums) error {
	unit := q.Unit()
	lo, hi := layout.TenantAPIRequestsFrom(tid, q.From), layout.TenantAPIRequestsFrom(tid, q.To)
	it, err := r.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
	if err != nil {
		return err
	}
	for it.First(); it.Valid(); it.Next() {
		h, err := layout.ParseHour(layout.APIRequestsHour(tid, it.Key()))
		if err != nil {
			_ = it.Close()
			return err
		}
		i := int(h.Sub(q.From) / unit)
		if i < 0 || i >= len(tenant) {
			continue // the key bounds keep every hour in range; this keeps a bad key harmless
		}
		v := int64(layout.DecodeUint64(it.Value()))
		tenant[i].apiRequests += v
		totals.apiRequests += v
	}
	return it.Close()
}

// meterSums are exact integer sums; the floats of wire.UsageMeters are
// derived from them only when shown, so totals carry no rounding.
type meterSums struct {
	enqueued, executions, completed, failed, dead, activeMs, storageByteMs, apiRequests int64
}

func (m *meterSums) addShard(s wire.ShardMeters) {
	m.add(meterSums{enqueued: s.JobsEnqueued, executions: s.Executions, completed: s.JobsCompleted,
		failed: s.JobsFailed, dead: s.JobsDead, activeMs: s.ActiveJobMs, storageByteMs: s.StorageByteMs})
}

func (m *meterSums) add(o meterSums) {
	m.enqueued += o.enqueued
	m.executions += o.executions
	m.completed += o.completed
	m.failed += o.failed
	m.dead += o.dead
	m.activeMs += o.activeMs
	m.storageByteMs += o.storageByteMs
	m.apiRequests += o.apiRequests
}

func (m meterSums) view() wire.UsageMeters {
	return wire.UsageMeters{
		JobsEnqueued: m.enqueued, Executions: m.executions, JobsCompleted: m.completed, JobsFailed: m.failed,
		JobsDead: m.dead, ActiveJobSeconds: float64(m.activeMs) / 1e3, StorageByteHours: float64(m.storageByteMs) / 3.6e6,
		APIRequests: m.apiRequests,
	}
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

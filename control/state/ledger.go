package state

import (
	"encoding/json"
	"time"

	"github.com/cockroachdb/pebble"

	"github.com/jobbie/jobbie/control/billing"
	"github.com/jobbie/jobbie/control/state/internal/layout"
	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// Reading the ledger for billing: the rows billing's pure functions take.

// Ledger reads what tenant tid's invoice of the month starting at month
// is made of. The caller checked the tenant exists.
func Ledger(r pebble.Reader, tid string, month time.Time) (billing.Ledger, error) {
	start, end := month, month.AddDate(0, 1, 0)
	b, err := LoadPlanBook(r, tid)
	if err != nil {
		return billing.Ledger{}, err
	}
	l := billing.Ledger{Book: b}
	if l.Usage, err = usageRows(r, tid, "", start, end); err != nil {
		return billing.Ledger{}, err
	}
	if l.APIRequests, err = apiRequestRows(r, tid, start, end); err != nil {
		return billing.Ledger{}, err
	}
	placed, err := ListNamespaces(r, tid)
	if err != nil {
		return billing.Ledger{}, err
	}
	for _, ns := range placed {
		l.Placed = append(l.Placed, ns.ShardID)
	}
	if l.Cursors, err = LoadPullCursors(r); err != nil {
		return billing.Ledger{}, err
	}
	return l, nil
}

// GenerateInvoice is tenant tid's invoice of the month starting at month,
// status open, generated from the ledger now.
func GenerateInvoice(r pebble.Reader, tid string, month time.Time) (wire.Invoice, error) {
	l, err := Ledger(r, tid, month)
	if err != nil {
		return wire.Invoice{}, err
	}
	return billing.GenerateInvoice(l, month)
}

// UsageLedger reads what tenant tid's usage for q is made of: a tenant
// that does not exist, or a namespace q names that neither exists nor
// ever used anything, is not found.
func UsageLedger(r pebble.Reader, tid string, q wire.UsageQuery) (billing.UsageLedger, error) {
	if _, err := FindTenant(r, tid); err != nil {
		return billing.UsageLedger{}, err
	}
	var l billing.UsageLedger
	var err error
	if l.Usage, err = usageRows(r, tid, q.Namespace, q.From, q.To); err != nil {
		return billing.UsageLedger{}, err
	}
	placed, err := ListNamespaces(r, tid)
	if err != nil {
		return billing.UsageLedger{}, err
	}
	l.Placed = map[string]string{}
	for _, ns := range placed {
		if q.Namespace == "" || ns.Name == q.Namespace {
			l.Placed[ns.Name] = ns.ShardID
		}
	}
	if q.Namespace != "" && len(l.Usage) == 0 && l.Placed[q.Namespace] == "" {
		if n, err := count(r, layout.NamespaceUsage(tid, q.Namespace)); err != nil || n == 0 {
			return billing.UsageLedger{}, orNotFound(err, q.Namespace)
		}
	}
	if l.Cursors, err = LoadPullCursors(r); err != nil {
		return billing.UsageLedger{}, err
	}
	if l.Formers, err = movedFrom(r, tid, q); err != nil {
		return billing.UsageLedger{}, err
	}
	if q.Namespace == "" {
		if l.APIRequests, err = apiRequestRows(r, tid, q.From, q.To); err != nil {
			return billing.UsageLedger{}, err
		}
	}
	return l, nil
}

// FindTenant loads tenant tid, treating a malformed id as an unknown one.
func FindTenant(r pebble.Reader, tid string) (Tenant, error) {
	if tenancy.ValidateTenantID(tid) != nil {
		return Tenant{}, apierr.New(apierr.NotFound, "tenant %q not found", tid)
	}
	return LoadTenant(r, tid)
}

// movedFrom lists, by namespace, the shards tenant tid's namespaces were
// moved away from by moves that switched and had not finished before
// q.From: hours there may not be pulled yet.
func movedFrom(r pebble.Reader, tid string, q wire.UsageQuery) (map[string][]billing.FormerShard, error) {
	moves, err := ListMoves(r)
	if err != nil {
		return nil, err
	}
	out := map[string][]billing.FormerShard{}
	for _, m := range moves {
		switch {
		case m.TenantID != tid || (q.Namespace != "" && m.Namespace != q.Namespace):
		case m.State != wire.MoveSwitched && m.State != wire.MoveCompleted:
		case m.FinishedAt != nil && m.FinishedAt.Before(q.From):
		default:
			out[m.Namespace] = append(out[m.Namespace], billing.FormerShard{Shard: m.FromShard, Finished: m.FinishedAt})
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

// usageRows is every ledger entry of tenant tid (of namespace only, when
// set) of an hour in [from, to), in key order.
func usageRows(r pebble.Reader, tid, only string, from, to time.Time) ([]billing.UsageRow, error) {
	var out []billing.UsageRow
	err := scanUsage(r, tid, only, from, to, func(ns string, hour time.Time, shard string, m wire.ShardMeters) {
		out = append(out, billing.UsageRow{Namespace: ns, Hour: hour, Shard: shard, Meters: m})
	})
	return out, err
}

// apiRequestRows is every api request count of tenant tid of an hour in
// [from, to), in key order.
func apiRequestRows(r pebble.Reader, tid string, from, to time.Time) ([]billing.HourCount, error) {
	it, err := r.NewIter(&pebble.IterOptions{LowerBound: layout.TenantAPIRequestsFrom(tid, from), UpperBound: layout.TenantAPIRequestsFrom(tid, to)})
	if err != nil {
		return nil, err
	}
	var out []billing.HourCount
	for it.First(); it.Valid(); it.Next() {
		h, err := layout.ParseHour(layout.APIRequestsHour(tid, it.Key()))
		if err != nil {
			_ = it.Close()
			return nil, err
		}
		out = append(out, billing.HourCount{Hour: h, Count: int64(layout.DecodeUint64(it.Value()))})
	}
	return out, it.Close()
}

// MonthExecutions is tenant tid's executions in the month starting at
// month, summed over its ledger.
func MonthExecutions(r pebble.Reader, tid string, month time.Time) (int64, error) {
	var n int64
	err := scanUsage(r, tid, "", month, month.AddDate(0, 1, 0), func(_ string, _ time.Time, _ string, m wire.ShardMeters) {
		n += m.Executions
	})
	return n, err
}

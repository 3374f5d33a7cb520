package service

import (
	"context"
	"fmt"
	"time"

	"github.com/cockroachdb/pebble"

	"github.com/jobbie/jobbie/control/billing"
	"github.com/jobbie/jobbie/control/state"
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

// Usage answers tenant tid's usage for q: each namespace's buckets (only
// the periods it used something in) and totals, the tenant's buckets
// (every period of the range: the namespaces plus api requests, which
// gateways count per tenant) and totals. A bucket is incomplete while
// its period is not closed for every shard holding the namespace (for the
// tenant's, any namespace of the tenant; a shard it was moved away from
// counts until its cursor passes the move's finish), or, for api requests, until
// APIRequestsSettle after it ends. With a namespace, the answer is that
// namespace's alone, api requests left out; a namespace that neither
// Exists nor ever used anything is not found.
func (s *Service) Usage(ctx context.Context, tid string, q UsageQuery) (wire.Usage, error) {
	now := s.cfg.Clock.Now()
	return ViewValue(s, func(r pebble.Reader) (wire.Usage, error) {
		l, err := state.UsageLedger(r, tid, q)
		if err != nil {
			return wire.Usage{}, err
		}
		return billing.Usage(q, now, l), nil
	})
}

// RecordAPIRequests stores a gateway's counts (a bad report is a 400
// naming the field, and stores nothing).
func (s *Service) RecordAPIRequests(ctx context.Context, req wire.APIRequestsReport) error {
	if !ShardIDRE.MatchString(req.Gateway) {
		return apierr.Field("gateway", "gateway must be 1-63 letters, digits, '.', '_' or '-', starting with a letter or digit")
	}
	if len(req.Counts) > wire.MaxAPIRequestCounts {
		return apierr.Field("counts", "counts holds %d entries, over the limit of %d: send them in several reports", len(req.Counts), wire.MaxAPIRequestCounts)
	}
	cmd := state.PutAPIRequestsCmd{Gateway: req.Gateway, Counts: make([]state.APIRequestCount, 0, len(req.Counts))}
	for i, n := range req.Counts {
		field := fmt.Sprintf("counts[%d].", i)
		switch {
		case tenancy.ValidateTenantID(n.TenantID) != nil:
			return apierr.Field(field+"tenant_id", "tenant_id %q is not a tenant id", n.TenantID)
		case n.Hour.IsZero() || !n.Hour.Equal(n.Hour.Truncate(time.Hour)):
			return apierr.Field(field+"hour", "hour must be the start of an hour")
		case n.Count < 0:
			return apierr.Field(field+"count", "count must not be negative")
		}
		cmd.Counts = append(cmd.Counts, state.APIRequestCount{Tenant: n.TenantID, Hour: n.Hour.Unix(), Count: uint64(n.Count)})
	}
	if len(cmd.Counts) == 0 {
		return nil
	}
	_, err := propose(ctx, s, state.OpPutAPIRequests, &cmd)
	return err
}

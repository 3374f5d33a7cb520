package control

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/control/service"
	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/wire"
)

// The answer's shape: namespaces' buckets where they used something,
// the tenant's for every period with api requests added, exact totals,
// floats derived from integers, and incomplete until every shard holding
// the namespace has closed the period.
func TestUsageBucketsTotalsAndIncomplete(t *testing.T) {
	t.Parallel()
	b := setup(t, noPulls, func(c *Config) { c.Shards = testShards[:1] }) // every namespace on s1
	tid := b.newTenant(t, "acme").Tenant.ID
	_, err := b.srv.CreateNamespace(context.Background(), tid, "emails")
	require.NoError(t, err)
	m := wire.ShardMeters{JobsEnqueued: 3, Executions: 4, JobsCompleted: 2, JobsFailed: 2, JobsDead: 1, ActiveJobMs: 1500, StorageByteMs: 7_200_000}
	put(t, b.srv, "s1", hourOf(10), entry(tid, "default", hourOf(9), m), entry(tid, "default", hourOf(10), m),
		entry(tid, "emails", hourOf(10), runs(1)))
	require.NoError(t, recordAPIRequests(b.srv, tid, "gw_1", hourOf(9), 6))

	u := usageOf(t, b.srv, tid, "")
	require.Equal(t, hourOf(0), u.From)
	require.Equal(t, hourOf(0).Add(24*time.Hour), u.To)
	require.Equal(t, "hour", u.Granularity)
	require.Len(t, u.Tenant, 24, "every hour of the range")
	require.Len(t, u.Namespaces, 2)
	def := u.Namespaces[0]
	require.Equal(t, "default", def.Namespace)
	require.Len(t, def.Buckets, 2, "only the hours it used something in")
	require.Equal(t, wire.UsageBucketView{Start: hourOf(9), Incomplete: false, Meters: wire.UsageMeters{JobsEnqueued: 3, Executions: 4,
		JobsCompleted: 2, JobsFailed: 2, JobsDead: 1, ActiveJobSeconds: 1.5, StorageByteHours: 2}}, def.Buckets[0])
	require.True(t, def.Buckets[1].Incomplete, "hour 10 is s1's cursor: still open")
	require.Equal(t, int64(8), def.Totals.Executions)
	require.InDelta(t, 3.0, def.Totals.ActiveJobSeconds, 0)
	require.Equal(t, "emails", u.Namespaces[1].Namespace)

	require.Equal(t, int64(6), u.Tenant[9].Meters.APIRequests)
	require.Equal(t, int64(4), u.Tenant[9].Meters.Executions)
	require.False(t, u.Tenant[9].Incomplete)
	require.Equal(t, int64(5), u.Tenant[10].Meters.Executions)
	require.True(t, u.Tenant[10].Incomplete)
	require.False(t, u.Tenant[3].Incomplete, "an hour nothing happened in, closed everywhere")
	require.Equal(t, wire.UsageMeters{}, u.Tenant[3].Meters)
	require.Equal(t, wire.UsageMeters{JobsEnqueued: 7, Executions: 9, JobsCompleted: 5, JobsFailed: 4, JobsDead: 2,
		ActiveJobSeconds: 3, StorageByteHours: 4, APIRequests: 6}, u.Totals)

	// By day: one bucket, open while any of its hours is.
	q, err := service.ParseUsageQuery(time.Now(), "2026-11-05T10:00:00Z", "2026-11-05T11:00:00Z", "day", "")
	require.NoError(t, err)
	day, err := b.srv.Usage(context.Background(), tid, q)
	require.NoError(t, err)
	require.Len(t, day.Tenant, 1)
	require.Equal(t, hourOf(0), day.Tenant[0].Start)
	require.True(t, day.Tenant[0].Incomplete)
	require.Equal(t, u.Totals, day.Totals)

	// One namespace: its own buckets, no api requests; an unknown one is
	// not found.
	em := usageOf(t, b.srv, tid, "emails")
	require.Len(t, em.Namespaces, 1)
	require.Equal(t, int64(1), em.Totals.Executions)
	require.Equal(t, int64(1), em.Tenant[10].Meters.Executions)
	_, err = b.srv.Usage(context.Background(), tid, service.UsageQuery{From: hourOf(0), To: hourOf(1), Granularity: "hour", Namespace: "nope"})
	require.Equal(t, apierr.NotFound, apierr.CodeOf(err))
}

// A namespace whose shard was never read is incomplete, as is the
// tenant's bucket; a period whose api requests may still come is too.
func TestUsageIncompleteWithoutACursor(t *testing.T) {
	t.Parallel()
	b := setup(t, noPulls, func(c *Config) { c.Shards = testShards[:1] })
	tid := b.newTenant(t, "acme").Tenant.ID
	u := usageOf(t, b.srv, tid, "")
	require.Empty(t, u.Namespaces, "nothing used yet")
	for _, bk := range u.Tenant {
		require.True(t, bk.Incomplete, "s1 holds default and was never read")
	}
	put(t, b.srv, "s1", ceilTo(time.Now().UTC(), time.Hour).Add(time.Hour))
	q, err := service.ParseUsageQuery(time.Now(), "", "", "hour", "")
	require.NoError(t, err)
	u, err = b.srv.Usage(context.Background(), tid, q)
	require.NoError(t, err)
	require.False(t, u.Tenant[0].Incomplete)
	require.True(t, u.Tenant[23].Incomplete, "the current hour's api requests are still being counted")
}

// ceilTo is t moved forward to a multiple of unit.
func ceilTo(t time.Time, unit time.Duration) time.Time {
	c := t.Truncate(unit)
	if c.Before(t) {
		c = c.Add(unit)
	}
	return c
}

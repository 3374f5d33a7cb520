package control

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/control/leader"
	"github.com/jobbie/jobbie/control/state"
	"github.com/jobbie/jobbie/internal/pki/pkitest"
	"github.com/jobbie/jobbie/wire"
)

// put stores entries of tenant tid on shard as one pull's command would,
// moving the cursor to next when set.
func put(t *testing.T, srv *Server, shard string, next time.Time, entries ...state.UsageEntry) {
	t.Helper()
	require.NoError(t, srv.PutUsage(context.Background(), shard, entries, next, next.Add(time.Hour+leader.CloseMargin+time.Second)))
}

func entry(tid, ns string, h time.Time, m wire.ShardMeters) state.UsageEntry {
	return state.UsageEntry{Tenant: tid, Namespace: ns, Hour: h.Unix(), Meters: m}
}

// The same bucket stored twice counts once, and an overlapping read (a
// page that repeats one hour with a later value and adds the next)
// replaces rather than adds.
func TestLedgerPutIsIdempotent(t *testing.T) {
	t.Parallel()
	b := setup(t, noPulls)
	tid := b.newTenant(t, "acme").Tenant.ID
	nine, ten := hourOf(9), hourOf(10)

	put(t, b.srv, "s1", time.Time{}, entry(tid, "default", nine, runs(5)))
	put(t, b.srv, "s1", time.Time{}, entry(tid, "default", nine, runs(5)))
	u := usageOf(t, b.srv, tid, "")
	require.Equal(t, int64(5), u.Totals.Executions, "the same bucket twice counts once")

	put(t, b.srv, "s1", time.Time{}, entry(tid, "default", nine, runs(7)), entry(tid, "default", ten, runs(2)))
	u = usageOf(t, b.srv, tid, "")
	require.Equal(t, int64(9), u.Totals.Executions, "7 replaced 5; 2 added")
	require.Len(t, u.Namespaces, 1)
	require.Len(t, u.Namespaces[0].Buckets, 2)
	require.Equal(t, int64(7), u.Namespaces[0].Buckets[0].Meters.Executions)
	require.Equal(t, int64(2), u.Namespaces[0].Buckets[1].Meters.Executions)

	// Another shard's bucket of the same namespace and hour (the namespace
	// moved) adds to it.
	put(t, b.srv, "s2", time.Time{}, entry(tid, "default", ten, runs(1)))
	require.Equal(t, int64(10), usageOf(t, b.srv, tid, "").Totals.Executions)
}

// A cursor moves forward only, so a late command (a pull by a deposed
// leader) cannot reopen closed hours.
func TestLedgerCursorNeverMovesBack(t *testing.T) {
	t.Parallel()
	b := setup(t, noPulls)
	put(t, b.srv, "s1", hourOf(12))
	require.True(t, cursorOf(t, b.srv, "s1").Equal(hourOf(12)))
	put(t, b.srv, "s1", hourOf(10))
	require.True(t, cursorOf(t, b.srv, "s1").Equal(hourOf(12)))
	put(t, b.srv, "s1", hourOf(13))
	require.True(t, cursorOf(t, b.srv, "s1").Equal(hourOf(13)))
	require.True(t, cursorOf(t, b.srv, "s2").IsZero(), "each shard has its own")
}

// The ledger and the cursor are replicated state: after the control
// plane restarts (a new leader, term and process), both are there, and a
// pull resumes from the cursor.
func TestLedgerAndCursorSurviveLeaderChange(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t, pkitest.New(t), noPulls)
	first := startServer(t, cfg)
	tid := mustTenant(t, first, "acme")
	put(t, first, "s1", hourOf(11), entry(tid, "default", hourOf(10), runs(3)))
	require.NoError(t, recordAPIRequests(first, tid, "gw_1", hourOf(10), 4))
	require.NoError(t, first.Stop())

	second := startServer(t, cfg)
	require.True(t, cursorOf(t, second, "s1").Equal(hourOf(11)))
	u := usageOf(t, second, tid, "")
	require.Equal(t, int64(3), u.Totals.Executions)
	require.Equal(t, int64(4), u.Totals.APIRequests)
}

// A gateway's count only grows within its hour: the larger is kept, so
// a push delayed behind a later one cannot lower it; instances add up.
func TestAPIRequestsKeepTheLargerCount(t *testing.T) {
	t.Parallel()
	b := setup(t, noPulls)
	tid := b.newTenant(t, "acme").Tenant.ID
	for _, n := range []int64{5, 3, 9, 9} {
		require.NoError(t, recordAPIRequests(b.srv, tid, "gw_a", hourOf(10), n))
	}
	require.NoError(t, recordAPIRequests(b.srv, tid, "gw_b", hourOf(10), 2))
	require.NoError(t, recordAPIRequests(b.srv, tid, "gw_b", hourOf(11), 1))
	u := usageOf(t, b.srv, tid, "")
	require.Equal(t, int64(12), u.Totals.APIRequests)
	require.Equal(t, int64(11), u.Tenant[10].Meters.APIRequests)
	require.Equal(t, int64(1), u.Tenant[11].Meters.APIRequests)
	require.Empty(t, u.Namespaces, "api requests belong to the tenant, not a namespace")
	require.Zero(t, usageOf(t, b.srv, tid, "default").Totals.APIRequests, "nor to a namespace's view")
}

// recordAPIRequests records one count through the gateways' entry point.
func recordAPIRequests(s *Server, tid, gw string, hour time.Time, n int64) error {
	return s.RecordAPIRequests(context.Background(), wire.APIRequestsReport{Gateway: gw,
		Counts: []wire.APIRequestsCount{{TenantID: tid, Hour: hour, Count: n}}})
}

func mustTenant(t *testing.T, srv *Server, name string) string {
	t.Helper()
	res, err := srv.CreateTenant(context.Background(), name)
	require.NoError(t, err)
	return res.Tenant.ID
}

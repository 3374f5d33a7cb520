package gateway

import (
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// Headers a client sends that only the gateway may set on a shard's
// request, with values a client would want.
var forgedHeaders = []string{
	wire.MaxPendingJobsHeader, "999999999",
	wire.MaxPayloadBytesHeader, "999999999",
	wire.ExecutionsLeftHeader, "999999999",
	wire.FairWeightHeader, "1000",
	wire.EventRetentionHeader, "720,10000000",
	wire.ShardNamespaceHeader, tenancy.ShardNamespace(tenantB, "default"),
	wire.QueueScopeHeader, "*",
	wire.ForwardedHeader, "n9",
	wire.AppliedHeader, "123456",
	wire.LeaderHeader, "127.0.0.1:1",
}

// Every route that can create jobs carries the plan's max_pending_jobs to
// the shard, every request its weight and max_payload_bytes; what the
// client sends of any (or of any other internal header) never reaches
// the shard.
func TestShardHeadersCarryThePlan(t *testing.T) {
	t.Parallel()
	b, fb := setupBilling(t)
	fb.setTenantPlan(tenantA, wire.Plan{Name: "pro", Weight: 7, Limits: wire.PlanLimits{MaxPendingJobs: i64p(50), MaxPayloadBytes: i64p(4096),
		EventRetentionEvents: i64p(2000)}})
	owner := b.key(t, tenancy.RoleOwner, "*")

	creates := []struct{ method, path string }{
		{http.MethodPost, "/api/v1/enqueue"},
		{http.MethodPost, "/api/v1/enqueue/batch"},
		{http.MethodPost, "/api/v1/ack/job_1"},
		{http.MethodPost, "/api/v1/ack/batch"},
		{http.MethodPost, "/api/v1/fail/job_1"},
		{http.MethodPost, "/api/v1/jobs/job_1/retry"},
		{http.MethodPost, "/api/v1/jobs/job_1/move"},
		{http.MethodPost, "/api/v1/jobs/bulk"},
	}
	others := []struct{ method, path string }{
		{http.MethodGet, "/api/v1/jobs/job_1"},
		{http.MethodPost, "/api/v1/jobs/job_1/cancel"},
		{http.MethodGet, "/api/v1/queues"},
		{http.MethodPost, "/api/v1/heartbeat"},
		{http.MethodPost, "/api/v1/schedules"},
		{http.MethodPost, "/api/v1/fetch"},
	}
	body := map[string]any{"queue": "q", "payload": 1, "jobs": []any{map[string]any{"queue": "q"}}, "timeout": "0s"}
	check := func(method, path string, pending string) {
		t.Helper()
		for _, forged := range [][]string{nil, forgedHeaders} {
			r := b.do(t, method, path, owner, body, forged...)
			require.Less(t, r.status, 300, "%s %s: %s", method, path, r.body)
			got := b.shard.last(t)
			require.Equal(t, path, got.URI)
			require.Equal(t, "7", got.Header.Get(wire.FairWeightHeader), "%s %s", method, path)
			require.Equal(t, pending, got.Header.Get(wire.MaxPendingJobsHeader), "%s %s", method, path)
			require.Equal(t, "4096", got.Header.Get(wire.MaxPayloadBytesHeader), "%s %s", method, path)
			require.Equal(t, []string{"24,2000"}, got.Header.Values(wire.EventRetentionHeader), "%s %s", method, path)
			require.Empty(t, got.Header.Values(wire.ExecutionsLeftHeader), "no executions cap: %s %s", method, path)
			require.Equal(t, tenancy.ShardNamespace(tenantA, "default"), got.Header.Get(wire.ShardNamespaceHeader))
			for _, h := range []string{wire.QueueScopeHeader, wire.ForwardedHeader, wire.AppliedHeader, wire.LeaderHeader} {
				require.Empty(t, got.Header.Values(h), "%s reached the shard on %s %s", h, method, path)
			}
		}
	}
	for _, rt := range creates {
		check(rt.method, rt.path, "50")
	}
	for _, rt := range others {
		check(rt.method, rt.path, "")
	}

	// The event stream is proxied apart: it has the weight, and nothing
	// the client forged.
	b.do(t, http.MethodGet, "/api/v1/events", owner, nil, forgedHeaders...)
	got := b.shard.last(t)
	require.Equal(t, "/api/v1/events", got.URI)
	require.Equal(t, "7", got.Header.Get(wire.FairWeightHeader))
	require.Equal(t, []string{"24,2000"}, got.Header.Values(wire.EventRetentionHeader))
	require.Empty(t, got.Header.Get(wire.MaxPendingJobsHeader))
	require.Empty(t, got.Header.Get(wire.QueueScopeHeader))
	require.Equal(t, tenancy.ShardNamespace(tenantA, "default"), got.Header.Get(wire.ShardNamespaceHeader))

	// Tenant B has no plan: weight 1 and no limit, whatever it sends.
	keyB := b.signer.Sign(claimsFor(tenantB, "key_b", tenancy.RoleOwner, "default"))
	r := b.do(t, http.MethodPost, "/api/v1/enqueue", keyB, enqueueBody, forgedHeaders...)
	require.Equal(t, http.StatusCreated, r.status, "body: %s", r.body)
	got = b.shard.last(t)
	require.Equal(t, tenancy.ShardNamespace(tenantB, "default"), got.Header.Get(wire.ShardNamespaceHeader))
	require.Equal(t, "1", got.Header.Get(wire.FairWeightHeader))
	require.Empty(t, got.Header.Values(wire.MaxPendingJobsHeader))
	require.Empty(t, got.Header.Values(wire.MaxPayloadBytesHeader))
	require.Empty(t, got.Header.Values(wire.ExecutionsLeftHeader))
	require.Empty(t, got.Header.Values(wire.EventRetentionHeader), "a plan not known says nothing of retention")
}

// Under a hard monthly executions cap, a fetch carries what the month
// still allows, so the shard leases no more (a fetch/batch of 1000
// against 5 left); a soft cap sends nothing, and neither does a route
// that leases nothing.
func TestShardHeadersCarryExecutionsLeft(t *testing.T) {
	t.Parallel()
	clk := clockwork.NewFakeClockAt(quotaNow)
	b, fb := setupBilling(t, func(c *Config) { c.Clock = clk })
	month := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	fb.setPlan(tenantA, "pro", wire.PlanLimits{MonthlyExecutions: i64p(200), MonthlyExecutionsEnforcement: "hard"})
	fb.SetQuota(wire.TenantQuota{TenantID: tenantA, Plan: "pro", Month: month, Executions: 195})
	worker := b.key(t, tenancy.RoleWorker, "default")
	fetch := map[string]any{"queues": []string{"q"}, "timeout": "0s", "max": 1000}
	for _, p := range []string{"/api/v1/fetch/batch", "/api/v1/fetch"} {
		r := b.do(t, http.MethodPost, p, worker, fetch, forgedHeaders...)
		require.Less(t, r.status, 300, "body %s", r.body)
		got := b.shard.last(t)
		require.Equal(t, p, got.URI)
		require.Equal(t, "5", got.Header.Get(wire.ExecutionsLeftHeader), p)
	}
	r := b.do(t, http.MethodPost, "/api/v1/heartbeat", worker, map[string]any{"jobs": map[string]any{"job_1": map[string]any{}}})
	require.Less(t, r.status, 300, "body %s", r.body)
	require.Empty(t, b.shard.last(t).Header.Values(wire.ExecutionsLeftHeader), "a heartbeat leases nothing")

	fb.setPlan(tenantB, "lax", wire.PlanLimits{MonthlyExecutions: i64p(200), MonthlyExecutionsEnforcement: "soft"})
	fb.SetQuota(wire.TenantQuota{TenantID: tenantB, Plan: "lax", Month: month, Executions: 195})
	keyB := b.signer.Sign(claimsFor(tenantB, "key_b", tenancy.RoleWorker, "default"))
	r = b.do(t, http.MethodPost, "/api/v1/fetch/batch", keyB, fetch)
	require.Less(t, r.status, 300, "body %s", r.body)
	require.Empty(t, b.shard.last(t).Header.Values(wire.ExecutionsLeftHeader), "a soft cap refuses nothing")
}

// A changed plan reaches the shard's headers with the plan refresh.
func TestShardHeadersFollowPlanChanges(t *testing.T) {
	t.Parallel()
	b, fb := setupBilling(t, func(c *Config) { c.PlanRefreshInterval = 50 * time.Millisecond })
	fb.setTenantPlan(tenantA, wire.Plan{Name: "small"})
	key := b.key(t, tenancy.RoleProducer, "default")
	require.Equal(t, http.StatusCreated, b.do(t, http.MethodPost, "/api/v1/enqueue", key, enqueueBody).status)
	got := b.shard.last(t)
	require.Equal(t, "1", got.Header.Get(wire.FairWeightHeader), "no weight is 1")
	require.Empty(t, got.Header.Values(wire.MaxPendingJobsHeader))
	require.Equal(t, "24,100000", got.Header.Get(wire.EventRetentionHeader), "the default retention of a known plan")

	fb.setTenantPlan(tenantA, wire.Plan{Name: "big", Weight: 5000, Limits: wire.PlanLimits{MaxPendingJobs: i64p(1_000_000),
		EventRetentionHours: i64p(72), EventRetentionEvents: i64p(1000)}})
	deadline := time.Now().Add(10 * time.Second) // the sweep runs every second
	for {
		require.Equal(t, http.StatusCreated, b.do(t, http.MethodPost, "/api/v1/enqueue", key, enqueueBody).status)
		got = b.shard.last(t)
		if got.Header.Get(wire.MaxPendingJobsHeader) != "" {
			break
		}
		require.True(t, time.Now().Before(deadline), "the new plan did not reach the shard's headers")
		time.Sleep(20 * time.Millisecond)
	}
	require.Equal(t, "1000000", got.Header.Get(wire.MaxPendingJobsHeader))
	require.Equal(t, "1000", got.Header.Get(wire.FairWeightHeader), "clamped to what a shard takes")
	require.Equal(t, "72,1000", got.Header.Get(wire.EventRetentionHeader))
}

// The jobs a shard answers it leased count at once against a hard cap on
// the gateway that proxied them, before the ledger has them: fetches
// through one gateway stop at the cap however stale the ledger's count.
func TestLeasedJobsCountAgainstTheCapAtOnce(t *testing.T) {
	t.Parallel()
	clk := clockwork.NewFakeClockAt(quotaNow)
	b, fb := setupBilling(t, func(c *Config) { c.Clock = clk })
	month := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	fb.setPlan(tenantA, "pro", wire.PlanLimits{MonthlyExecutions: i64p(10), MonthlyExecutionsEnforcement: "hard"})
	fb.SetQuota(wire.TenantQuota{TenantID: tenantA, Plan: "pro", Month: month, Executions: 4})
	var lefts []string
	var mu sync.Mutex
	b.shard.setHandler(func(w http.ResponseWriter, r *http.Request) {
		left := r.Header.Get(wire.ExecutionsLeftHeader)
		mu.Lock()
		lefts = append(lefts, left)
		mu.Unlock()
		w.Header().Set(wire.LeasedHeader, left) // a shard leasing all it may
		writeJSON(w, http.StatusOK, wire.FetchBatchResponse{Jobs: []wire.FetchedJob{}})
	})
	worker := b.key(t, tenancy.RoleWorker, "default")
	fetch := map[string]any{"queues": []string{"q"}, "timeout": "0s", "max": 1000}
	r := b.do(t, http.MethodPost, "/api/v1/fetch/batch", worker, fetch)
	require.Equal(t, http.StatusOK, r.status, "body %s", r.body)
	require.Empty(t, r.header.Values(wire.LeasedHeader), "the shard's count is the gateway's own")
	e := b.do(t, http.MethodPost, "/api/v1/fetch/batch", worker, fetch).requireError(t, http.StatusTooManyRequests, apierr.QuotaExceeded)
	require.Contains(t, e.Message, "(10 this month)")
	mu.Lock()
	require.Equal(t, []string{"6"}, lefts, "the second fetch never reached the shard")
	mu.Unlock()
}

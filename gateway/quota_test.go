package gateway

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/gateway/limits"
	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/obs"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

func i64p(v int64) *int64 { return &v }

var quotaNow = time.Date(2026, 3, 31, 22, 0, 0, 0, time.UTC)

// A payload over the plan's max_payload_bytes is a 413 naming the field,
// the limit and the plan; the shard never sees it. At the limit it passes.
func TestQuotaPayloadSize(t *testing.T) {
	t.Parallel()
	b, fb := setupBilling(t)
	fb.setPlan(tenantA, "pro", wire.PlanLimits{MaxPayloadBytes: i64p(20)})
	key := b.key(t, tenancy.RoleProducer, "default")

	seen := b.shard.count()
	e := b.do(t, http.MethodPost, "/api/v1/enqueue", key, map[string]any{"queue": "q", "payload": map[string]string{"to": "someone@example.com"}}).
		requireError(t, http.StatusRequestEntityTooLarge, apierr.TooLarge)
	require.Equal(t, "payload", e.Field)
	require.Contains(t, e.Message, "max_payload_bytes limit of 20")
	require.Contains(t, e.Message, `"pro"`)
	require.Equal(t, seen, b.shard.count(), "refused before the shard")

	// A payload of exactly the limit passes (its JSON is 20 bytes).
	exact := []byte(`{"queue":"q","payload":"` + strings.Repeat("x", 18) + `"}`)
	r := b.do(t, http.MethodPost, "/api/v1/enqueue", key, exact)
	require.Equal(t, http.StatusCreated, r.status, "body: %s", r.body)

	batch := []byte(`{"jobs":[{"queue":"q","payload":1},{"queue":"q","payload":"` + strings.Repeat("y", 40) + `"}]}`)
	e = b.do(t, http.MethodPost, "/api/v1/enqueue/batch", key, batch).requireError(t, http.StatusRequestEntityTooLarge, apierr.TooLarge)
	require.Equal(t, "jobs[1].payload", e.Field)

	// Another tenant's plan has no such limit.
	bKey := b.signer.Sign(claimsFor(tenantB, "key_b", tenancy.RoleProducer, "default"))
	r = b.do(t, http.MethodPost, "/api/v1/enqueue/batch", bKey, batch)
	require.Equal(t, http.StatusCreated, r.status, "body: %s", r.body)
}

// Under a hard monthly cap, fetches are refused once the month's
// executions reach it, with Retry-After up to the next UTC month; other
// routes go on. A new month starts again from nothing.
func TestQuotaMonthlyExecutionsHard(t *testing.T) {
	t.Parallel()
	clk := clockwork.NewFakeClockAt(quotaNow)
	b, fb := setupBilling(t, func(c *Config) { c.Clock = clk })
	month := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	fb.setPlan(tenantA, "pro", wire.PlanLimits{MonthlyExecutions: i64p(1000), MonthlyExecutionsEnforcement: "hard"})
	fb.SetQuota(wire.TenantQuota{TenantID: tenantA, Plan: "pro", Month: month, Executions: 999})
	worker := b.key(t, tenancy.RoleWorker, "default")
	fetch := map[string]any{"queues": []string{"q"}, "timeout": "0s"}
	r := b.do(t, http.MethodPost, "/api/v1/fetch", worker, fetch)
	require.Less(t, r.status, 300, "below the cap: body %s", r.body)

	fb.SetQuota(wire.TenantQuota{TenantID: tenantA, Plan: "pro", Month: month, Executions: 1000})
	r = b.do(t, http.MethodPost, "/api/v1/fetch", worker, fetch)
	require.Less(t, r.status, 300, "cached for a few seconds")
	asks := fb.QuotaAskCount()
	clk.Advance(limits.QuotaRefresh)
	waitQuotaAsk(t, b, fb, worker, fetch, asks)
	for _, p := range []string{"/api/v1/fetch", "/api/v1/fetch/batch"} {
		r = b.do(t, http.MethodPost, p, worker, fetch)
		e := r.requireError(t, http.StatusTooManyRequests, apierr.QuotaExceeded)
		require.Contains(t, e.Message, "monthly_executions limit of 1000")
		require.Contains(t, e.Message, `"pro"`)
		require.Equal(t, "7195", r.header.Get("Retry-After"), "to 1 April 00:00 UTC")
	}
	require.Equal(t, http.StatusCreated, b.do(t, http.MethodPost, "/api/v1/enqueue", b.key(t, tenancy.RoleProducer, "default"), enqueueBody).status,
		"enqueues go on")

	tick(t, clk, 2*time.Hour) // April: the cached March count no longer holds (tick: the revocation list refreshes)
	r = b.do(t, http.MethodPost, "/api/v1/fetch", worker, fetch)
	require.Less(t, r.status, 300, "body %s", r.body)
}

// waitQuotaAsk sends fetches until control was asked for the quota
// again (a stale answer is served while the refresh runs).
func waitQuotaAsk(t *testing.T, b *bundle, fb fakeBilling, key string, body any, asks int) {
	t.Helper()
	for fb.QuotaAskCount() == asks {
		b.do(t, http.MethodPost, "/api/v1/fetch", key, body)
		select {
		case <-fb.Billing.QuotaAsked:
		case <-time.After(5 * time.Second):
			t.Fatal("control was not asked for the quota again")
		}
	}
	// The answer lands just after control sends it: one more fetch
	// through the singleflight makes sure it is stored.
	b.gw.quotas.Await(tenantA)
}

// Over a soft cap nothing is refused; a counter moves and it is logged
// once per tenant and month.
func TestQuotaMonthlyExecutionsSoft(t *testing.T) {
	t.Parallel()
	clk := clockwork.NewFakeClockAt(quotaNow)
	b, fb := setupBilling(t, func(c *Config) { c.Clock = clk })
	fb.setPlan(tenantA, "pro", wire.PlanLimits{MonthlyExecutions: i64p(1000), MonthlyExecutionsEnforcement: "soft"})
	fb.SetQuota(wire.TenantQuota{TenantID: tenantA, Plan: "pro", Month: time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC), Executions: 5000})
	worker := b.key(t, tenancy.RoleWorker, "default")
	fetch := map[string]any{"queues": []string{"q"}, "timeout": "0s"}
	before := counterValue(t, "jobbie_gateway_soft_quota_exceeded_total")
	for range 3 {
		r := b.do(t, http.MethodPost, "/api/v1/fetch", worker, fetch)
		require.Less(t, r.status, 300, "body %s", r.body)
	}
	require.GreaterOrEqual(t, counterValue(t, "jobbie_gateway_soft_quota_exceeded_total")-before, 3.0)
	require.False(t, b.gw.quotas.SoftOnce(tenantA, time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)), "logged already this month")
	require.True(t, b.gw.quotas.SoftOnce(tenantA, time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC)), "and again next month")
}

// A tenant whose plan has no cap costs no quota read; one with a cap is
// read once and again only after quotaRefresh.
func TestQuotaReadOnlyUnderACap(t *testing.T) {
	t.Parallel()
	clk := clockwork.NewFakeClockAt(quotaNow)
	b, fb := setupBilling(t, func(c *Config) { c.Clock = clk })
	fb.setPlan(tenantA, "pro", wire.PlanLimits{MonthlyExecutions: i64p(1000)})
	fb.SetQuota(wire.TenantQuota{TenantID: tenantA, Plan: "pro", Month: time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC), Executions: 1})
	fetch := map[string]any{"queues": []string{"q"}, "timeout": "0s"}
	bWorker := b.signer.Sign(claimsFor(tenantB, "key_b", tenancy.RoleWorker, "default"))
	for range 3 {
		require.Less(t, b.do(t, http.MethodPost, "/api/v1/fetch", bWorker, fetch).status, 300)
	}
	require.Zero(t, fb.QuotaAskCount(), "B has no plan, so no cap")
	worker := b.key(t, tenancy.RoleWorker, "default")
	for range 3 {
		require.Less(t, b.do(t, http.MethodPost, "/api/v1/fetch", worker, fetch).status, 300)
	}
	require.Equal(t, 1, fb.QuotaAskCount(), "cached")
	clk.Advance(limits.QuotaRefresh)
	waitQuotaAsk(t, b, fb, worker, fetch, 1)
}

// counterValue reads the counter named name of the process's registry,
// its series summed.
func counterValue(t *testing.T, name string) float64 {
	t.Helper()
	mfs, err := obs.Registry.Gather()
	require.NoError(t, err)
	var v float64
	for _, mf := range mfs {
		if mf.GetName() == name {
			for _, m := range mf.GetMetric() {
				v += m.GetCounter().GetValue()
			}
		}
	}
	return v
}

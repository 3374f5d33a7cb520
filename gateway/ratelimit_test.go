package gateway

import (
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/gateway/internal/controlfake"
	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// limitedSetup starts a gateway on a fake clock whose control serves
// plans; the demand exchange is left to the test (it ticks hourly).
func limitedSetup(t *testing.T, opts ...func(*Config)) (*bundle, *controlfake.Control, *clockwork.FakeClock) {
	t.Helper()
	clk := clockwork.NewFakeClock()
	b := newBundle(t)
	plans := b.control
	b.start(t, append([]func(*Config){func(c *Config) {
		// The fake clock jumps by minutes: the revocation list, never
		// refreshed on it, must stay fresh meanwhile.
		c.Clock, c.RateLimitSyncInterval, c.RevocationMaxAge = clk, time.Hour, 1000*time.Hour
	}}, opts...)...)
	b.waitReady(t)
	return b, plans, clk
}

func batchOf(n int) map[string]any {
	jobs := make([]any, n)
	for i := range jobs {
		jobs[i] = enqueueBody
	}
	return map[string]any{"jobs": jobs}
}

// requireFields asserts a reply's RateLimit-Policy and RateLimit fields.
func requireFields(t *testing.T, r reply, policy, limit string) {
	t.Helper()
	require.Equal(t, policy, r.header.Get(wire.RateLimitPolicyHeader), "status %d: %s", r.status, r.body)
	require.Equal(t, limit, r.header.Get(wire.RateLimitHeader), "status %d: %s", r.status, r.body)
}

func TestRequestsPerSecondRefusesOverTheLimitWithRetryAfterAndTheFields(t *testing.T) {
	t.Parallel()
	b, plans, clk := limitedSetup(t)
	plans.SetPlan(tenantA, limited("starter", 5, 0))
	key := b.key(t, tenancy.RoleOwner, "*")
	const policy = `"rps";q=5;w=1`

	for i := 4; i >= 1; i-- {
		r := b.do(t, http.MethodPost, "/api/v1/enqueue", key, enqueueBody)
		require.Equal(t, http.StatusCreated, r.status, "%s", r.body)
		requireFields(t, r, policy, `"rps";r=`+strconv.Itoa(i)+`;t=1`)
	}
	r := b.do(t, http.MethodGet, "/api/v1/queues", key, nil) // every request counts, not only enqueues
	require.Equal(t, http.StatusCreated, r.status)
	requireFields(t, r, policy, `"rps";r=0;t=1`)
	seen := b.shard.count()

	r = b.do(t, http.MethodPost, "/api/v1/enqueue", key, enqueueBody)
	e := r.requireError(t, http.StatusTooManyRequests, apierr.RateLimited)
	require.Contains(t, e.Message, "5 requests per second (requests_per_second)")
	require.Equal(t, "1", r.header.Get("Retry-After"), "whole seconds, at least 1, for a 200 ms wait")
	requireFields(t, r, policy, `"rps";r=0;t=1`)
	require.Equal(t, seen, b.shard.count(), "a refused request never reaches the shard")

	clk.Advance(199 * time.Millisecond)
	b.do(t, http.MethodPost, "/api/v1/enqueue", key, enqueueBody).requireError(t, http.StatusTooManyRequests, apierr.RateLimited)
	clk.Advance(time.Millisecond)
	require.Equal(t, http.StatusCreated, b.do(t, http.MethodPost, "/api/v1/enqueue", key, enqueueBody).status, "a token every 200 ms")

	clk.Advance(time.Minute)
	r = b.do(t, http.MethodPost, "/api/v1/enqueue", key, enqueueBody)
	requireFields(t, r, policy, `"rps";r=4;t=1`) // a minute's rest saves one second's worth, no more
}

func TestEnqueuesPerSecondCountsEveryJobOfABatch(t *testing.T) {
	t.Parallel()
	b, plans, clk := limitedSetup(t)
	plans.SetPlan(tenantA, limited("pro", 0, 10))
	key := b.key(t, tenancy.RoleOwner, "*")
	const policy = `"eps";q=10;w=1`

	r := b.do(t, http.MethodPost, "/api/v1/enqueue/batch", key, batchOf(4))
	require.Equal(t, http.StatusCreated, r.status)
	requireFields(t, r, policy, `"eps";r=6;t=1`)
	r = b.do(t, http.MethodPost, "/api/v1/enqueue", key, enqueueBody)
	requireFields(t, r, policy, `"eps";r=5;t=1`)

	r = b.do(t, http.MethodGet, "/api/v1/queues", key, nil)
	require.Equal(t, http.StatusCreated, r.status, "other requests pass and take nothing")
	requireFields(t, r, policy, `"eps";r=5;t=1`)

	r = b.do(t, http.MethodPost, "/api/v1/enqueue/batch", key, batchOf(6))
	e := r.requireError(t, http.StatusTooManyRequests, apierr.RateLimited)
	require.Contains(t, e.Message, "10 jobs enqueued per second (enqueues_per_second)")
	require.Equal(t, "1", r.header.Get("Retry-After"))
	requireFields(t, r, policy, `"eps";r=0;t=1`)
	require.Equal(t, http.StatusCreated, b.do(t, http.MethodPost, "/api/v1/enqueue/batch", key, batchOf(5)).status)

	// A batch over a second's worth passes from a full bucket, and its
	// debt is waited out: 25 jobs at 10/s leave 15 owed, so one more job
	// waits 1.6 s.
	clk.Advance(time.Second)
	require.Equal(t, http.StatusCreated, b.do(t, http.MethodPost, "/api/v1/enqueue/batch", key, batchOf(25)).status)
	r = b.do(t, http.MethodPost, "/api/v1/enqueue", key, enqueueBody)
	r.requireError(t, http.StatusTooManyRequests, apierr.RateLimited)
	require.Equal(t, "2", r.header.Get("Retry-After"))
	requireFields(t, r, policy, `"eps";r=0;t=2`)

	// A body that is not a batch counts one job; the shard refuses it.
	clk.Advance(3 * time.Second)
	r = b.do(t, http.MethodPost, "/api/v1/enqueue/batch", key, []byte(`{"jobs":`))
	requireFields(t, r, policy, `"eps";r=9;t=1`)
}

func TestBothLimitsAndARefusalByOneTakesNothingFromTheOther(t *testing.T) {
	t.Parallel()
	b, plans, _ := limitedSetup(t)
	plans.SetPlan(tenantA, limited("pro", 100, 3))
	key := b.key(t, tenancy.RoleOwner, "*")
	const policy = `"rps";q=100;w=1, "eps";q=3;w=1`

	r := b.do(t, http.MethodPost, "/api/v1/enqueue/batch", key, batchOf(3))
	require.Equal(t, http.StatusCreated, r.status)
	requireFields(t, r, policy, `"rps";r=99;t=1, "eps";r=0;t=1`)
	r = b.do(t, http.MethodPost, "/api/v1/enqueue", key, enqueueBody)
	e := r.requireError(t, http.StatusTooManyRequests, apierr.RateLimited)
	require.Contains(t, e.Message, "enqueues_per_second")
	requireFields(t, r, policy, `"rps";r=99;t=1, "eps";r=0;t=1`)
	r = b.do(t, http.MethodGet, "/api/v1/queues", key, nil)
	require.Equal(t, http.StatusCreated, r.status)
	requireFields(t, r, policy, `"rps";r=98;t=1, "eps";r=0;t=1`)
}

func TestATenantWithoutRateLimitsIsUntouched(t *testing.T) {
	t.Parallel()
	b, plans, _ := limitedSetup(t)
	plans.SetPlan(tenantA, limited("tiny", 1, 0))
	maxKeys := int64(5)
	plans.SetPlan(tenantB, wire.TenantPlan{Plan: wire.Plan{Name: "keys-only", Limits: wire.PlanLimits{MaxKeys: &maxKeys}}})
	keyA := b.key(t, tenancy.RoleOwner, "*")
	keyB := b.signer.Sign(claimsFor(tenantB, "key_b", tenancy.RoleOwner, "*"))

	require.Equal(t, http.StatusCreated, b.do(t, http.MethodPost, "/api/v1/enqueue", keyA, enqueueBody).status)
	b.do(t, http.MethodPost, "/api/v1/enqueue", keyA, enqueueBody).requireError(t, http.StatusTooManyRequests, apierr.RateLimited)
	for range 50 {
		r := b.do(t, http.MethodPost, "/api/v1/enqueue", keyB, enqueueBody)
		require.Equal(t, http.StatusCreated, r.status, "%s", r.body)
		require.Empty(t, r.header.Values(wire.RateLimitPolicyHeader))
		require.Empty(t, r.header.Values(wire.RateLimitHeader))
	}
	tp, ok := b.gw.plans.TenantPlan(tenantB)
	require.True(t, ok)
	require.Equal(t, "keys-only", tp.Plan.Name, "the plan's other limits are there for its quotas")

	// A tenant control knows no plan of (404) has no limits either.
	b.control.AddNamespace("t_01hx7y2k3m0000000000000002", "default", "s1", b.shard.addr())
	keyC := b.signer.Sign(claimsFor("t_01hx7y2k3m0000000000000002", "key_c", tenancy.RoleOwner, "*"))
	for range 5 {
		r := b.do(t, http.MethodPost, "/api/v1/enqueue", keyC, enqueueBody)
		require.Equal(t, http.StatusCreated, r.status)
		require.Empty(t, r.header.Values(wire.RateLimitHeader))
	}
	_, ok = b.gw.plans.TenantPlan("t_01hx7y2k3m0000000000000002")
	require.False(t, ok)
	require.EqualValues(t, 3, plans.PlanFetches.Load(), "one fetch per tenant")
}

func TestPlansKeepTheirLimitsWhileControlIsDownAndAnUnknownTenantIsAdmitted(t *testing.T) {
	t.Parallel()
	logs := &syncBuffer{}
	b, plans, clk := limitedSetup(t, func(c *Config) { c.Logger = slog.New(slog.NewTextHandler(logs, nil)) })
	plans.SetPlan(tenantA, limited("starter", 2, 0))
	plans.SetPlan(tenantB, limited("starter", 1, 0))
	keyA := b.key(t, tenancy.RoleOwner, "*")
	keyB := b.signer.Sign(claimsFor(tenantB, "key_b", tenancy.RoleOwner, "*"))
	require.Equal(t, http.StatusCreated, b.do(t, http.MethodPost, "/api/v1/enqueue", keyA, enqueueBody).status)

	plans.SetPlansDown(true)
	clk.Advance(11 * time.Second) // past the refresh interval: A's refresh fails
	b.gw.plans.Sweep()
	require.Contains(t, logs.String(), "cannot refresh tenants' plans")
	for range 2 {
		require.Equal(t, http.StatusCreated, b.do(t, http.MethodPost, "/api/v1/enqueue", keyA, enqueueBody).status)
	}
	r := b.do(t, http.MethodPost, "/api/v1/enqueue", keyA, enqueueBody)
	r.requireError(t, http.StatusTooManyRequests, apierr.RateLimited)
	requireFields(t, r, `"rps";q=2;w=1`, `"rps";r=0;t=1`)

	// B was never fetched: admitted without limits, and said so once.
	for range 5 {
		r := b.do(t, http.MethodPost, "/api/v1/enqueue", keyB, enqueueBody)
		require.Equal(t, http.StatusCreated, r.status)
		require.Empty(t, r.header.Values(wire.RateLimitHeader))
	}
	require.Contains(t, logs.String(), "admitting a tenant's requests without rate limits")
	require.Contains(t, logs.String(), tenantB)

	plans.SetPlansDown(false)
	clk.Advance(2 * time.Second)
	b.gw.plans.Sweep()
	require.Contains(t, logs.String(), "a tenant's plan is known again")
	require.Contains(t, logs.String(), "refreshing tenants' plans again")
	require.Equal(t, http.StatusCreated, b.do(t, http.MethodPost, "/api/v1/enqueue", keyB, enqueueBody).status)
	r = b.do(t, http.MethodPost, "/api/v1/enqueue", keyB, enqueueBody)
	r.requireError(t, http.StatusTooManyRequests, apierr.RateLimited)
}

func TestAChangedPlanAppliesAtTheNextRefreshAndAPendingOneAtItsTime(t *testing.T) {
	t.Parallel()
	b, plans, clk := limitedSetup(t)
	next := clk.Now().Add(30 * time.Minute)
	tp := limited("starter", 2, 0)
	pro := limited("pro", 50, 0).Plan
	tp.Next, tp.NextFrom = &pro, &next
	plans.SetPlan(tenantA, tp)
	key := b.key(t, tenancy.RoleOwner, "*")
	policy := func() string {
		return b.do(t, http.MethodGet, "/api/v1/queues", key, nil).header.Get(wire.RateLimitPolicyHeader)
	}
	require.Equal(t, `"rps";q=2;w=1`, policy())
	got, ok := b.gw.plans.TenantPlan(tenantA)
	require.True(t, ok)
	require.Equal(t, "starter", got.Plan.Name)
	require.Equal(t, "pro", got.Next.Name)

	// The operator raises starter's limit: seen at the next refresh.
	tp.Plan = limited("starter", 3, 0).Plan
	plans.SetPlan(tenantA, tp)
	clk.Advance(9 * time.Second)
	b.gw.plans.Sweep()
	require.Equal(t, `"rps";q=2;w=1`, policy())
	clk.Advance(time.Second)
	b.gw.plans.Sweep()
	require.Equal(t, `"rps";q=3;w=1`, policy())

	// Control down: the pending change still takes effect at its time.
	plans.SetPlansDown(true)
	clk.Advance(next.Sub(clk.Now()))
	b.gw.plans.Sweep()
	require.Equal(t, `"rps";q=50;w=1`, policy())
	got, ok = b.gw.plans.TenantPlan(tenantA)
	require.True(t, ok)
	require.Equal(t, "pro", got.Plan.Name)
	require.True(t, next.Equal(got.Since), "since %s", got.Since)
	require.Nil(t, got.Next)
}

func TestConcurrentFirstRequestsShareOneFetchAndWaitForIt(t *testing.T) {
	t.Parallel()
	b, plans, _ := limitedSetup(t, func(c *Config) { c.PlanFetchWait = time.Minute })
	plans.SetPlan(tenantA, limited("starter", 1000, 0))
	gate := make(chan struct{})
	plans.SetPlanGate(gate)
	key := b.key(t, tenancy.RoleOwner, "*")
	var wg sync.WaitGroup
	replies := make([]reply, 20)
	for i := range replies {
		wg.Go(func() { replies[i] = b.do(t, http.MethodPost, "/api/v1/enqueue", key, enqueueBody) })
	}
	require.Eventually(t, func() bool { return plans.PlanFetches.Load() == 1 }, 10*time.Second, time.Millisecond)
	close(gate)
	wg.Wait()
	for _, r := range replies {
		require.Equal(t, http.StatusCreated, r.status)
		require.NotEmpty(t, r.header.Get(wire.RateLimitHeader), "every request that came while the plan was on its way waited for it")
	}
	require.EqualValues(t, 1, plans.PlanFetches.Load())
	require.Equal(t, `"rps";q=1000;w=1`, b.do(t, http.MethodGet, "/api/v1/queues", key, nil).header.Get(wire.RateLimitPolicyHeader))
}

func TestAFirstRequestWaitsNoLongerThanPlanFetchWait(t *testing.T) {
	t.Parallel()
	b, plans, _ := limitedSetup(t, func(c *Config) { c.PlanFetchWait = 50 * time.Millisecond })
	plans.SetPlan(tenantA, limited("starter", 1, 0))
	gate := make(chan struct{})
	plans.SetPlanGate(gate)
	key := b.key(t, tenancy.RoleOwner, "*")
	for range 3 { // the first waits 50 ms, the others not at all
		r := b.do(t, http.MethodPost, "/api/v1/enqueue", key, enqueueBody)
		require.Equal(t, http.StatusCreated, r.status, "admitted without limits while the plan is on its way")
		require.Empty(t, r.header.Values(wire.RateLimitHeader))
	}
	close(gate)
	require.Eventually(t, func() bool {
		return b.do(t, http.MethodGet, "/api/v1/queues", key, nil).status == http.StatusTooManyRequests
	}, 10*time.Second, time.Millisecond, "the plan applies once it arrives")
}

// limited is a plan with these per-second limits; 0 leaves one out.
func limited(name string, rps, eps int64) wire.TenantPlan {
	p := wire.Plan{Name: name, Currency: "USD", Version: 1}
	if rps > 0 {
		p.Limits.RequestsPerSecond = &rps
	}
	if eps > 0 {
		p.Limits.EnqueuesPerSecond = &eps
	}
	return wire.TenantPlan{Plan: p}
}

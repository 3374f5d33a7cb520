package gateway

import (
	"context"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/gateway/internal/controlfake"
	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// setupUsage is setup, with the fake control's usage at hand.
func setupUsage(t testing.TB, opts ...func(*Config)) (*bundle, *controlfake.Control) {
	b := setup(t, opts...)
	return b, b.control
}

// counted is the latest api request count pushed for each (tenant,
// hour), whichever instance pushed it, and the instances seen.
func counted(fc *controlfake.Control) (map[string]map[time.Time]int64, []string) {
	out := map[string]map[time.Time]int64{}
	var gws []string
	for _, p := range fc.PushList() {
		if !slices.Contains(gws, p.Gateway) {
			gws = append(gws, p.Gateway)
		}
		for _, c := range p.Counts {
			if out[c.TenantID] == nil {
				out[c.TenantID] = map[time.Time]int64{}
			}
			out[c.TenantID][c.Hour] = c.Count
		}
	}
	return out, gws
}

const usageRange = "/api/v1/usage?from=2026-11-05T09:00:00Z&to=2026-11-05T11:00:00Z"

// An owner sees the tenant's usage as control answers it, for the range
// it asked, aligned and explicit.
func TestUsageAnswersTheTenantsUsage(t *testing.T) {
	t.Parallel()
	b, fu := setupUsage(t)
	fu.SetUsage(tenantA, sampleUsage())
	r := b.do(t, http.MethodGet, usageRange+"&granularity=hour", b.key(t, tenancy.RoleOwner, "*"), nil)
	require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)
	var u wire.Usage
	r.decode(t, &u)
	require.Equal(t, sampleUsage(), u)
	var raw map[string]any
	r.decode(t, &raw)
	require.Len(t, raw, 6, "from, to, granularity, namespaces, tenant, totals: %s", r.body)
	bucket := raw["tenant"].([]any)[0].(map[string]any)
	require.ElementsMatch(t, []string{"start", "meters", "incomplete"}, mapKeys(bucket))
	require.ElementsMatch(t, []string{"jobs_enqueued", "executions", "jobs_completed", "jobs_failed", "jobs_dead",
		"active_job_seconds", "storage_byte_hours", "push_deliveries", "webhook_deliveries", "api_requests"}, mapKeys(bucket["meters"].(map[string]any)))

	asked := fu.UsageAsked()
	require.Len(t, asked, 1)
	require.Equal(t, tenantA, asked[0].Tenant)
	require.Equal(t, "2026-11-05T09:00:00Z", asked[0].Query.From.Format(time.RFC3339))
	require.Equal(t, "2026-11-05T11:00:00Z", asked[0].Query.To.Format(time.RFC3339))
	require.Equal(t, "hour", asked[0].Query.Granularity)
	require.Empty(t, asked[0].Query.Namespace)

	// Defaults: the last 24 hours up to the end of the current one; by
	// day, the last 30 days.
	clk := time.Now().UTC()
	b.do(t, http.MethodGet, "/api/v1/usage", b.key(t, tenancy.RoleOwner, "*"), nil)
	b.do(t, http.MethodGet, "/api/v1/usage?granularity=day&from=2026-11-05T09:30:00Z&to=2026-11-06T00:00:01Z", b.key(t, tenancy.RoleOwner, "*"), nil)
	asked = fu.UsageAsked()
	to, from := asked[1].Query.To, asked[1].Query.From
	require.WithinDuration(t, clk.Truncate(time.Hour).Add(time.Hour), to, time.Hour)
	require.Equal(t, 24*time.Hour, to.Sub(from))
	require.Equal(t, "2026-11-05T00:00:00Z", asked[2].Query.From.Format(time.RFC3339))
	require.Equal(t, "2026-11-07T00:00:00Z", asked[2].Query.To.Format(time.RFC3339))
}

func mapKeys(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// Bad input is a 400 naming the field, and control is not asked.
func TestUsageRefusesBadInput(t *testing.T) {
	t.Parallel()
	b, fu := setupUsage(t)
	fu.SetUsage(tenantA, sampleUsage())
	owner := b.key(t, tenancy.RoleOwner, "*")
	cases := []struct{ query, field string }{
		{"granularity=week", "granularity"},
		{"granularity=Hour", "granularity"},
		{"from=yesterday", "from"},
		{"from=2026-11-05", "from"},
		{"to=1730800000", "to"},
		{"from=2026-11-05T10:00:00Z&to=2026-11-05T10:00:00Z", "to"},
		{"from=2026-11-05T11:00:00Z&to=2026-11-05T10:00:00Z", "to"},
		{"from=2099-01-01T00:00:00Z", "to"},                                           // after the default to, now
		{"from=2026-10-01T00:00:00Z&to=2026-11-01T00:00:01Z", "from"},                 // 745 hours
		{"granularity=day&from=2025-01-01T00:00:00Z&to=2026-01-03T00:00:00Z", "from"}, // 367 days
		{"namespace=Not_A_Name", "namespace"},
	}
	for _, tc := range cases {
		e := b.do(t, http.MethodGet, "/api/v1/usage?"+tc.query, owner, nil).requireError(t, http.StatusBadRequest, apierr.BadRequest)
		require.Equal(t, tc.field, e.Field, "%s: %s", tc.query, e.Message)
	}
	require.Empty(t, fu.UsageAsked())
	for _, ok := range []string{"from=2026-10-01T00:00:00Z&to=2026-11-01T00:00:00Z", "granularity=day&from=2025-01-01T00:00:00Z&to=2026-01-02T00:00:00Z"} {
		require.Equal(t, http.StatusOK, b.do(t, http.MethodGet, "/api/v1/usage?"+ok, owner, nil).status, "the limits themselves: %s", ok)
	}
}

func TestUsageNeedsAKeyWithUsageRead(t *testing.T) {
	t.Parallel()
	b, fu := setupUsage(t)
	fu.SetUsage(tenantA, sampleUsage())
	b.do(t, http.MethodGet, usageRange, "", nil).requireError(t, http.StatusUnauthorized, apierr.Unauthenticated)
	b.do(t, http.MethodGet, usageRange, "not-a-key", nil).requireError(t, http.StatusUnauthorized, apierr.Unauthenticated)
	for _, role := range []tenancy.Role{tenancy.RoleViewer, tenancy.RoleDeveloper, tenancy.RoleProducer, tenancy.RoleWorker} {
		e := b.do(t, http.MethodGet, usageRange, b.key(t, role, "*"), nil).requireError(t, http.StatusForbidden, apierr.Forbidden)
		require.Contains(t, e.Message, "usage.read")
	}
	require.Empty(t, fu.UsageAsked())
	for _, role := range []tenancy.Role{tenancy.RoleOwner, tenancy.RoleAdmin, tenancy.RoleBilling} {
		require.Equal(t, http.StatusOK, b.do(t, http.MethodGet, usageRange, b.key(t, role, "*"), nil).status, role)
	}
}

// Billing reads usage and nothing else.
func TestBillingReadsUsageOnly(t *testing.T) {
	t.Parallel()
	b, fu := setupUsage(t)
	fu.SetUsage(tenantA, sampleUsage())
	billing := b.key(t, tenancy.RoleBilling, "*")
	r := b.do(t, http.MethodGet, usageRange, billing, nil)
	require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)
	var u wire.Usage
	r.decode(t, &u)
	require.Equal(t, int64(8), u.Totals.APIRequests, "a key over every namespace sees the whole tenant")
	seen := b.shard.count()
	for _, rt := range []struct{ method, path string }{
		{http.MethodGet, "/api/v1/queues"}, {http.MethodGet, "/api/v1/namespaces"}, {http.MethodGet, "/api/v1/namespaces/default"},
		{http.MethodGet, "/api/v1/keys"}, {http.MethodGet, "/api/v1/roles"}, {http.MethodGet, "/api/v1/jobs/job_1"},
		{http.MethodGet, "/api/v1/schedules"}, {http.MethodPost, "/api/v1/enqueue"},
	} {
		b.do(t, rt.method, rt.path, billing, enqueueBody).requireError(t, http.StatusForbidden, apierr.Forbidden)
	}
	require.Equal(t, seen, b.shard.count(), "nothing reached the shard")
}

// A namespace filter must be one the key may use and read usage in; a
// key limited to some namespaces sees only theirs, and no api requests,
// which belong to the whole tenant.
func TestUsageNamespacesOfTheKey(t *testing.T) {
	t.Parallel()
	b, fu := setupUsage(t)
	fu.SetUsage(tenantA, sampleUsage())
	emailsOnly := b.key(t, tenancy.RoleBilling, "emails")
	e := b.do(t, http.MethodGet, usageRange+"&namespace=default", emailsOnly, nil).requireError(t, http.StatusForbidden, apierr.Forbidden)
	require.Contains(t, e.Message, `namespace "default"`)
	require.Empty(t, fu.UsageAsked())

	r := b.do(t, http.MethodGet, usageRange+"&namespace=emails", emailsOnly, nil)
	require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)
	require.Equal(t, "emails", fu.UsageAsked()[0].Query.Namespace)

	r = b.do(t, http.MethodGet, usageRange, emailsOnly, nil)
	require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)
	var u wire.Usage
	r.decode(t, &u)
	require.Len(t, u.Namespaces, 1)
	require.Equal(t, "emails", u.Namespaces[0].Namespace)
	require.Equal(t, int64(1), u.Tenant[0].Meters.Executions, "default's 3 left out")
	require.InDelta(t, 0.1, u.Tenant[0].Meters.ActiveJobSeconds, 1e-12)
	require.Equal(t, int64(2), u.Tenant[1].Meters.Executions)
	require.True(t, u.Tenant[1].Incomplete, "control's flag is kept")
	require.Equal(t, wire.UsageMeters{JobsEnqueued: 3, Executions: 3, JobsCompleted: 3, ActiveJobSeconds: 0.101}, u.Totals)
	for _, bk := range u.Tenant {
		require.Zero(t, bk.Meters.APIRequests)
	}

	// A custom role reading usage in emails only is narrowed the same way.
	b.control.SetRole(tenantA, "finance", perm([]string{"usage.read"}, []string{"emails"}, []string{"*"}))
	fin := b.customKey(t, "finance", "*")
	b.do(t, http.MethodGet, usageRange, fin, nil).requireError(t, http.StatusForbidden, apierr.Forbidden) // default is its namespace
	r = b.do(t, http.MethodGet, usageRange, fin, nil, wire.NamespaceHeader, "emails")
	require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)
	r.decode(t, &u)
	require.Equal(t, []string{"emails"}, []string{u.Namespaces[0].Namespace})
	require.Len(t, u.Namespaces, 1)
	require.Zero(t, u.Totals.APIRequests)
	b.do(t, http.MethodGet, usageRange+"&namespace=default", fin, nil, wire.NamespaceHeader, "emails").
		requireError(t, http.StatusForbidden, apierr.Forbidden)
}

// Tenant B's key is answered from B's usage alone: control is asked for
// B, whatever B sends.
func TestUsageTenantsApart(t *testing.T) {
	t.Parallel()
	b, fu := setupUsage(t)
	fu.SetUsage(tenantA, sampleUsage())
	fu.SetUsage(tenantB, wire.Usage{Namespaces: []wire.NamespaceMeters{}, Tenant: []wire.UsageBucketView{}})
	keyB := b.signer.Sign(claimsFor(tenantB, "key_b", tenancy.RoleOwner, "*"))
	r := b.do(t, http.MethodGet, usageRange, keyB, nil)
	require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)
	var u wire.Usage
	r.decode(t, &u)
	require.Empty(t, u.Namespaces)
	require.Zero(t, u.Totals.Executions)
	r = b.do(t, http.MethodGet, usageRange+"&namespace=emails", keyB, nil)
	require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)
	r.decode(t, &u)
	require.Empty(t, u.Namespaces, "B has no emails namespace; A's is not shown")
	for _, a := range fu.UsageAsked() {
		require.Equal(t, tenantB, a.Tenant)
	}
}

// Admitted requests are counted per tenant and hour, refused ones not,
// and the counts reach control when the gateway stops.
func TestAPIRequestsCountedAndPushedAtStop(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 11, 5, 9, 59, 0, 0, time.UTC)
	clk := clockwork.NewFakeClockAt(start)
	b, fu := setupUsage(t, func(c *Config) { c.Clock = clk; c.UsagePushInterval = time.Hour })
	fu.SetUsage(tenantA, sampleUsage())
	owner := b.key(t, tenancy.RoleOwner, "*")
	for range 3 {
		require.Equal(t, http.StatusCreated, b.do(t, http.MethodPost, "/api/v1/enqueue", owner, enqueueBody).status)
	}
	b.do(t, http.MethodPost, "/api/v1/enqueue", "", enqueueBody).requireError(t, http.StatusUnauthorized, apierr.Unauthenticated)
	b.do(t, http.MethodPost, "/api/v1/enqueue", b.key(t, tenancy.RoleViewer, "*"), enqueueBody).
		requireError(t, http.StatusForbidden, apierr.Forbidden)
	tick(t, clk, 2*time.Minute) // into the next hour, the refresh loops done
	require.Equal(t, http.StatusOK, b.do(t, http.MethodGet, usageRange, owner, nil).status)
	keyB := b.signer.Sign(claimsFor(tenantB, "key_b", tenancy.RoleProducer, "default"))
	require.Equal(t, http.StatusCreated, b.do(t, http.MethodPost, "/api/v1/enqueue", keyB, enqueueBody).status)

	require.NoError(t, b.gw.Stop())
	got, gws := counted(fu)
	require.Len(t, gws, 1)
	require.Regexp(t, `^gw_[0-9a-z]{26}$`, gws[0])
	h9, h10 := start.Truncate(time.Hour), start.Truncate(time.Hour).Add(time.Hour)
	require.Equal(t, map[string]map[time.Time]int64{tenantA: {h9: 3, h10: 1}, tenantB: {h10: 1}}, got)
}

// The gateway pushes on its own every UsagePushInterval.
func TestAPIRequestsPushedEveryInterval(t *testing.T) {
	t.Parallel()
	b, fu := setupUsage(t, func(c *Config) { c.UsagePushInterval = 10 * time.Millisecond })
	require.Equal(t, http.StatusCreated, b.do(t, http.MethodPost, "/api/v1/enqueue", b.key(t, tenancy.RoleOwner, "*"), enqueueBody).status)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for {
		select {
		case <-fu.Billing.Pushed:
		case <-ctx.Done():
			t.Fatal("no push reached control")
		}
		if got, _ := counted(fu); len(got[tenantA]) == 1 {
			return
		}
	}
}

// sampleUsage is two namespaces' usage on 5 November 2026, 9:00 to
// 11:00, with api requests in the tenant's buckets.
func sampleUsage() wire.Usage {
	h9, h10 := time.Date(2026, 11, 5, 9, 0, 0, 0, time.UTC), time.Date(2026, 11, 5, 10, 0, 0, 0, time.UTC)
	m := func(n int64, ms int64) wire.UsageMeters {
		return wire.UsageMeters{JobsEnqueued: n, Executions: n, JobsCompleted: n, ActiveJobSeconds: float64(ms) / 1e3}
	}
	withAPI := func(u wire.UsageMeters, n int64) wire.UsageMeters { u.APIRequests = n; return u }
	return wire.Usage{
		From: h9, To: h10.Add(time.Hour), Granularity: "hour",
		Namespaces: []wire.NamespaceMeters{
			{Namespace: "default", Buckets: []wire.UsageBucketView{{Start: h9, Meters: m(3, 300)}}, Totals: m(3, 300)},
			{Namespace: "emails", Buckets: []wire.UsageBucketView{{Start: h9, Meters: m(1, 100)}, {Start: h10, Meters: m(2, 1),
				Incomplete: true}}, Totals: m(3, 101)},
		},
		Tenant: []wire.UsageBucketView{{Start: h9, Meters: withAPI(m(4, 400), 7)}, {Start: h10, Meters: withAPI(m(2, 1), 1), Incomplete: true}},
		Totals: withAPI(m(6, 401), 8),
	}
}

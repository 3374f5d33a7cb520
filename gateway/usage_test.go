package gateway

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

const usageRange = "/api/v1/usage?from=2026-11-05T09:00:00Z&to=2026-11-05T11:00:00Z"

// An owner sees the tenant's usage as control answers it, for the range
// it asked, aligned and explicit.
func TestUsageAnswersTheTenantsUsage(t *testing.T) {
	t.Parallel()
	b, fu := setupUsage(t)
	fu.set(tenantA, sampleUsage())
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
		"active_job_seconds", "storage_byte_hours", "api_requests"}, mapKeys(bucket["meters"].(map[string]any)))

	asked := fu.asked()
	require.Len(t, asked, 1)
	require.Equal(t, tenantA, asked[0].tenant)
	require.Equal(t, "2026-11-05T09:00:00Z", asked[0].query.Get("from"))
	require.Equal(t, "2026-11-05T11:00:00Z", asked[0].query.Get("to"))
	require.Equal(t, "hour", asked[0].query.Get("granularity"))
	require.False(t, asked[0].query.Has("namespace"))

	// Defaults: the last 24 hours up to the end of the current one; by
	// day, the last 30 days.
	clk := time.Now().UTC()
	b.do(t, http.MethodGet, "/api/v1/usage", b.key(t, tenancy.RoleOwner, "*"), nil)
	b.do(t, http.MethodGet, "/api/v1/usage?granularity=day&from=2026-11-05T09:30:00Z&to=2026-11-06T00:00:01Z", b.key(t, tenancy.RoleOwner, "*"), nil)
	asked = fu.asked()
	to, err := time.Parse(time.RFC3339, asked[1].query.Get("to"))
	require.NoError(t, err)
	require.WithinDuration(t, clk.Truncate(time.Hour).Add(time.Hour), to, time.Hour)
	from, err := time.Parse(time.RFC3339, asked[1].query.Get("from"))
	require.NoError(t, err)
	require.Equal(t, 24*time.Hour, to.Sub(from))
	require.Equal(t, "2026-11-05T00:00:00Z", asked[2].query.Get("from"))
	require.Equal(t, "2026-11-07T00:00:00Z", asked[2].query.Get("to"))
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
	fu.set(tenantA, sampleUsage())
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
	require.Empty(t, fu.asked())
	for _, ok := range []string{"from=2026-10-01T00:00:00Z&to=2026-11-01T00:00:00Z", "granularity=day&from=2025-01-01T00:00:00Z&to=2026-01-02T00:00:00Z"} {
		require.Equal(t, http.StatusOK, b.do(t, http.MethodGet, "/api/v1/usage?"+ok, owner, nil).status, "the limits themselves: %s", ok)
	}
}

func TestUsageNeedsAKeyWithUsageRead(t *testing.T) {
	t.Parallel()
	b, fu := setupUsage(t)
	fu.set(tenantA, sampleUsage())
	b.do(t, http.MethodGet, usageRange, "", nil).requireError(t, http.StatusUnauthorized, apierr.Unauthenticated)
	b.do(t, http.MethodGet, usageRange, "not-a-key", nil).requireError(t, http.StatusUnauthorized, apierr.Unauthenticated)
	for _, role := range []tenancy.Role{tenancy.RoleViewer, tenancy.RoleDeveloper, tenancy.RoleProducer, tenancy.RoleWorker} {
		e := b.do(t, http.MethodGet, usageRange, b.key(t, role, "*"), nil).requireError(t, http.StatusForbidden, apierr.Forbidden)
		require.Contains(t, e.Message, "usage.read")
	}
	require.Empty(t, fu.asked())
	for _, role := range []tenancy.Role{tenancy.RoleOwner, tenancy.RoleAdmin, tenancy.RoleBilling} {
		require.Equal(t, http.StatusOK, b.do(t, http.MethodGet, usageRange, b.key(t, role, "*"), nil).status, role)
	}
}

// Billing reads usage and nothing else.
func TestBillingReadsUsageOnly(t *testing.T) {
	t.Parallel()
	b, fu := setupUsage(t)
	fu.set(tenantA, sampleUsage())
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
	fu.set(tenantA, sampleUsage())
	emailsOnly := b.key(t, tenancy.RoleBilling, "emails")
	e := b.do(t, http.MethodGet, usageRange+"&namespace=default", emailsOnly, nil).requireError(t, http.StatusForbidden, apierr.Forbidden)
	require.Contains(t, e.Message, `namespace "default"`)
	require.Empty(t, fu.asked())

	r := b.do(t, http.MethodGet, usageRange+"&namespace=emails", emailsOnly, nil)
	require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)
	require.Equal(t, "emails", fu.asked()[0].query.Get("namespace"))

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
	b.control.setRole(tenantA, "finance", perm([]string{"usage.read"}, []string{"emails"}, []string{"*"}))
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
	fu.set(tenantA, sampleUsage())
	fu.set(tenantB, wire.Usage{Namespaces: []wire.NamespaceMeters{}, Tenant: []wire.UsageBucketView{}})
	keyB := b.signer.sign(t, claimsFor(tenantB, "key_b", tenancy.RoleOwner, "*"))
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
	for _, a := range fu.asked() {
		require.Equal(t, tenantB, a.tenant)
	}
}

// Admitted requests are counted per tenant and hour, refused ones not,
// and the counts reach control when the gateway stops.
func TestAPIRequestsCountedAndPushedAtStop(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 11, 5, 9, 59, 0, 0, time.UTC)
	clk := clockwork.NewFakeClockAt(start)
	b, fu := setupUsage(t, func(c *Config) { c.Clock = clk; c.UsagePushInterval = time.Hour })
	fu.set(tenantA, sampleUsage())
	owner := b.key(t, tenancy.RoleOwner, "*")
	for range 3 {
		require.Equal(t, http.StatusCreated, b.do(t, http.MethodPost, "/api/v1/enqueue", owner, enqueueBody).status)
	}
	b.do(t, http.MethodPost, "/api/v1/enqueue", "", enqueueBody).requireError(t, http.StatusUnauthorized, apierr.Unauthenticated)
	b.do(t, http.MethodPost, "/api/v1/enqueue", b.key(t, tenancy.RoleViewer, "*"), enqueueBody).
		requireError(t, http.StatusForbidden, apierr.Forbidden)
	tick(t, clk, 2*time.Minute) // into the next hour, the refresh loops done
	require.Equal(t, http.StatusOK, b.do(t, http.MethodGet, usageRange, owner, nil).status)
	keyB := b.signer.sign(t, claimsFor(tenantB, "key_b", tenancy.RoleProducer, "default"))
	require.Equal(t, http.StatusCreated, b.do(t, http.MethodPost, "/api/v1/enqueue", keyB, enqueueBody).status)

	require.NoError(t, b.gw.Stop())
	got, gws := fu.counted()
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
		case <-fu.pushed:
		case <-ctx.Done():
			t.Fatal("no push reached control")
		}
		if got, _ := fu.counted(); len(got[tenantA]) == 1 {
			return
		}
	}
}

// Only counts that changed are pushed, in reports of at most
// wire.MaxAPIRequestCounts; hours over an hour old are forgotten once pushed.
func TestRequestCounterPushesChangesInBatches(t *testing.T) {
	t.Parallel()
	b, fu := setupUsage(t, func(c *Config) { c.UsagePushInterval = time.Hour })
	rc := newRequestCounter(b.gw.control, b.gw.log)
	h := time.Date(2026, 11, 5, 9, 0, 0, 0, time.UTC)
	for i := range wire.MaxAPIRequestCounts + 1 {
		rc.add(fmt.Sprintf("t_01hx7y2k3m%016d", i), h.Add(time.Minute))
	}
	rc.add(tenantA, h.Add(2*time.Hour))
	require.NoError(t, rc.push(context.Background(), h.Add(2*time.Hour)))
	require.Len(t, fu.pushList(), 2, "501 counts of hour 9 and one of 11, in two reports")
	require.Len(t, fu.pushList()[0].Counts, wire.MaxAPIRequestCounts)
	require.NotContains(t, rc.hours, h.Unix(), "hour 9 is over an hour old and was pushed")

	require.NoError(t, rc.push(context.Background(), h.Add(2*time.Hour)))
	require.Len(t, fu.pushList(), 2, "nothing changed, nothing sent")
	rc.add(tenantA, h.Add(2*time.Hour))
	require.NoError(t, rc.push(context.Background(), h.Add(2*time.Hour)))
	require.Equal(t, []wire.APIRequestsCount{{TenantID: tenantA, Hour: h.Add(2 * time.Hour), Count: 2}}, fu.pushList()[2].Counts)
}

package control

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/control/billing"
	"github.com/jobbie/jobbie/internal/pki/pkitest"
	"github.com/jobbie/jobbie/wire"
)

var planStart = time.Date(2026, 3, 10, 12, 20, 0, 0, time.UTC)

func proPlan() map[string]any {
	return map[string]any{
		"name": "pro", "currency": "EUR",
		"prices":   map[string]any{"executions": map[string]any{"unit": 1000, "price": 5}},
		"included": map[string]any{"executions": 100000},
		"limits":   map[string]any{"max_keys": 3, "monthly_executions": 5000000},
	}
}

func TestHTTPPlansOperatorOnly(t *testing.T) {
	t.Parallel()
	b := setup(t)
	acme := b.newTenant(t, "acme")
	tid := acme.Tenant.ID
	for _, e := range []struct{ method, path string }{
		{http.MethodGet, "/control/v1/plans"}, {http.MethodPost, "/control/v1/plans"},
		{http.MethodGet, "/control/v1/plans/free"}, {http.MethodPut, "/control/v1/plans/free"},
		{http.MethodGet, "/control/v1/tenants/" + tid + "/plan"}, {http.MethodPut, "/control/v1/tenants/" + tid + "/plan"},
	} {
		requireError(t, b.do(t, e.method, e.path, "", proPlan()), 401, "unauthenticated")
		requireError(t, b.do(t, e.method, e.path, "not-a-key", proPlan()), 401, "unauthenticated")
		requireError(t, b.do(t, e.method, e.path, acme.OwnerKey, proPlan()), 403, "forbidden")
	}
	r := b.do(t, http.MethodGet, "/control/v1/plans", b.op, nil)
	require.Equal(t, 200, r.status, "body: %s", r.body)
	require.Len(t, decodeAs[struct{ Plans []wire.PlanView }](t, r).Plans, 1, "refused requests created nothing")
}

func TestHTTPPlansCreateShowEdit(t *testing.T) {
	t.Parallel()
	clk := clockwork.NewFakeClockAt(planStart)
	b := setup(t, func(c *Config) { c.Clock = clk })

	r := b.do(t, http.MethodGet, "/control/v1/plans", b.op, nil)
	require.Equal(t, 200, r.status)
	list := decodeAs[struct{ Plans []wire.PlanView }](t, r).Plans
	require.Len(t, list, 1)
	require.Equal(t, billing.FreePlan, list[0].Name)
	require.Equal(t, "USD", list[0].Currency)
	require.Empty(t, list[0].Prices)
	require.Equal(t, wire.PlanLimits{}, list[0].Limits, "free has no limits")

	r = b.do(t, http.MethodPost, "/control/v1/plans", b.op, proPlan())
	require.Equal(t, 201, r.status, "body: %s", r.body)
	pro := decodeAs[wire.PlanView](t, r)
	require.Equal(t, uint64(1), pro.Version)
	require.Equal(t, "hard", pro.Limits.MonthlyExecutionsEnforcement, "a cap without an enforcement is hard")
	require.Equal(t, time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC), pro.EffectiveFrom.UTC(), "a new plan's first version at once")
	requireError(t, b.do(t, http.MethodPost, "/control/v1/plans", b.op, proPlan()), 409, "conflict")
	requireError(t, b.do(t, http.MethodPost, "/control/v1/plans", b.op, map[string]any{"name": "free"}), 409, "conflict")

	edit := proPlan()
	edit["included"] = map[string]any{"executions": 200000}
	r = b.do(t, http.MethodPut, "/control/v1/plans/pro", b.op, edit)
	require.Equal(t, 200, r.status, "body: %s", r.body)
	require.Equal(t, uint64(2), decodeAs[wire.PlanView](t, r).Version)
	require.Equal(t, time.Date(2026, 3, 10, 13, 0, 0, 0, time.UTC), decodeAs[wire.PlanView](t, r).EffectiveFrom.UTC(), "a change from the next hour")
	r = b.do(t, http.MethodGet, "/control/v1/plans/pro", b.op, nil)
	require.Equal(t, 200, r.status)
	require.Equal(t, int64(200000), decodeAs[wire.PlanView](t, r).Included["executions"])

	requireError(t, b.do(t, http.MethodPut, "/control/v1/plans/nope", b.op, proPlan()), 400, "bad_request", "name")
	delete(edit, "name")
	requireError(t, b.do(t, http.MethodPut, "/control/v1/plans/nope", b.op, edit), 404, "not_found")
	requireError(t, b.do(t, http.MethodGet, "/control/v1/plans/nope", b.op, nil), 404, "not_found")
	requireError(t, b.do(t, http.MethodGet, "/control/v1/plans/Bad_Name", b.op, nil), 404, "not_found")
	edit["currency"] = "USD"
	requireError(t, b.do(t, http.MethodPut, "/control/v1/plans/pro", b.op, edit), 400, "bad_request", "currency")
}

func TestHTTPPlanValidationNamesTheField(t *testing.T) {
	t.Parallel()
	b := setup(t)
	bad := []struct {
		field string
		patch func(p map[string]any)
	}{
		{"name", func(p map[string]any) { p["name"] = "Pro_1" }},
		{"name", func(p map[string]any) { p["name"] = "" }},
		{"currency", func(p map[string]any) { p["currency"] = "eur" }},
		{"currency", func(p map[string]any) { p["currency"] = "EURO" }},
		{"prices.bananas", func(p map[string]any) { p["prices"] = map[string]any{"bananas": map[string]any{"unit": 1, "price": 1}} }},
		{"prices.executions.unit", func(p map[string]any) {
			p["prices"] = map[string]any{"executions": map[string]any{"unit": 0, "price": 1}}
		}},
		{"prices.executions.price", func(p map[string]any) {
			p["prices"] = map[string]any{"executions": map[string]any{"unit": 1, "price": -1}}
		}},
		{"included.bananas", func(p map[string]any) { p["included"] = map[string]any{"bananas": 1} }},
		{"included.executions", func(p map[string]any) { p["included"] = map[string]any{"executions": -1} }},
		{"limits.max_keys", func(p map[string]any) { p["limits"] = map[string]any{"max_keys": 0} }},
		{"limits.max_payload_bytes", func(p map[string]any) { p["limits"] = map[string]any{"max_payload_bytes": -5} }},
		{"limits.monthly_executions_enforcement", func(p map[string]any) {
			p["limits"] = map[string]any{"monthly_executions": 5, "monthly_executions_enforcement": "medium"}
		}},
		{"limits.monthly_executions_enforcement", func(p map[string]any) {
			p["limits"] = map[string]any{"monthly_executions_enforcement": "soft"}
		}},
		{"limits.event_retention_hours", func(p map[string]any) { p["limits"] = map[string]any{"event_retention_hours": 0} }},
		{"limits.event_retention_hours", func(p map[string]any) { p["limits"] = map[string]any{"event_retention_hours": 721} }},
		{"limits.event_retention_events", func(p map[string]any) { p["limits"] = map[string]any{"event_retention_events": 999} }},
		{"limits.event_retention_events", func(p map[string]any) {
			p["limits"] = map[string]any{"event_retention_events": 10_000_001}
		}},
		{"limits.audit_retention_days", func(p map[string]any) { p["limits"] = map[string]any{"audit_retention_days": 0} }},
		{"limits.audit_retention_days", func(p map[string]any) { p["limits"] = map[string]any{"audit_retention_days": 3651} }},
		{"weight", func(p map[string]any) { p["weight"] = -1 }},
		{"weight", func(p map[string]any) { p["weight"] = 1001 }},
		{"weight", func(p map[string]any) { p["weight"] = 1 << 40 }},
	}
	for _, c := range bad {
		p := proPlan()
		c.patch(p)
		requireError(t, b.do(t, http.MethodPost, "/control/v1/plans", b.op, p), 400, "bad_request", c.field)
	}
	requireError(t, b.do(t, http.MethodPost, "/control/v1/plans", b.op, `{"name":"x","surprise":1}`), 400, "bad_request")
	for _, w := range []any{2.5, "5", true} {
		p := proPlan()
		p["weight"] = w
		requireError(t, b.do(t, http.MethodPost, "/control/v1/plans", b.op, p), 400, "invalid_json", "weight")
	}
	r := b.do(t, http.MethodGet, "/control/v1/plans", b.op, nil)
	require.Len(t, decodeAs[struct{ Plans []wire.PlanView }](t, r).Plans, 1, "no bad plan was stored")
}

// A plan's event log retention is kept as given within its bounds, and
// absent reads as absent (the shard's defaults, 24 h and 100,000 events).
func TestHTTPPlanEventRetention(t *testing.T) {
	t.Parallel()
	b := setup(t)
	p := proPlan()
	p["limits"] = map[string]any{"event_retention_hours": 1, "event_retention_events": 1000, "audit_retention_days": 3650}
	r := b.do(t, http.MethodPost, "/control/v1/plans", b.op, p)
	require.Equal(t, 201, r.status, "body: %s", r.body)
	h, n := decodeAs[wire.PlanView](t, r).Limits.EventRetention()
	require.Equal(t, [2]int64{1, 1000}, [2]int64{h, n})
	require.EqualValues(t, 3650, decodeAs[wire.PlanView](t, r).Limits.AuditRetention())
	p = proPlan()
	p["name"], p["limits"] = "top", map[string]any{"event_retention_hours": 720, "event_retention_events": 10_000_000}
	r = b.do(t, http.MethodPost, "/control/v1/plans", b.op, p)
	require.Equal(t, 201, r.status, "body: %s", r.body)
	h, n = decodeAs[wire.PlanView](t, r).Limits.EventRetention()
	require.Equal(t, [2]int64{720, 10_000_000}, [2]int64{h, n})
	r = b.do(t, http.MethodGet, "/control/v1/plans/free", b.op, nil)
	require.Equal(t, 200, r.status)
	free := decodeAs[wire.PlanView](t, r).Limits
	require.Nil(t, free.EventRetentionHours)
	require.EqualValues(t, wire.DefaultAuditRetentionDays, free.AuditRetention(), "absent: the default, 90 days")
	h, n = free.EventRetention()
	require.Equal(t, [2]int64{24, 100_000}, [2]int64{h, n})
}

// A plan's weight is 1 when absent or 0, and any of 1..1000 is kept as
// given (out of range is TestHTTPPlanValidationNamesTheField's).
func TestHTTPPlanWeight(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for i, tc := range []struct {
		weight any // nil: absent
		want   int64
	}{{nil, 1}, {0, 1}, {1, 1}, {37, 37}, {1000, 1000}} {
		p := proPlan()
		p["name"] = fmt.Sprintf("w%d", i)
		if tc.weight != nil {
			p["weight"] = tc.weight
		}
		r := b.do(t, http.MethodPost, "/control/v1/plans", b.op, p)
		require.Equal(t, 201, r.status, "body: %s", r.body)
		require.Equal(t, tc.want, decodeAs[wire.PlanView](t, r).Weight, "weight %v", tc.weight)
		r = b.do(t, http.MethodGet, "/control/v1/plans/"+p["name"].(string), b.op, nil)
		require.Equal(t, tc.want, decodeAs[wire.PlanView](t, r).Weight, "weight %v as stored", tc.weight)
	}
	// An edit to a bad weight changes nothing.
	p := proPlan()
	p["name"], p["weight"] = "w3", 0
	r := b.do(t, http.MethodPut, "/control/v1/plans/w3", b.op, p)
	require.Equal(t, 200, r.status, "body: %s", r.body)
	require.Equal(t, int64(1), decodeAs[wire.PlanView](t, r).Weight)
	p["weight"] = 1001
	requireError(t, b.do(t, http.MethodPut, "/control/v1/plans/w3", b.op, p), 400, "bad_request", "weight")
	r = b.do(t, http.MethodGet, "/control/v1/plans/w3", b.op, nil)
	require.Equal(t, uint64(2), decodeAs[wire.PlanView](t, r).Version, "the refused edit made no version")

	r = b.do(t, http.MethodGet, "/control/v1/plans/free", b.op, nil)
	require.Equal(t, int64(1), decodeAs[wire.PlanView](t, r).Weight, "the built-in plan's weight is 1 too")
}

// A tenant's plan changes from the next hour; the gateway reads it from
// the internal API with its certificate.
func TestHTTPTenantPlanFromTheNextHour(t *testing.T) {
	t.Parallel()
	clk := clockwork.NewFakeClockAt(planStart)
	b := setup(t, func(c *Config) { c.Clock = clk })
	gw := b.as(t, pkitest.Gateway)
	acme := b.newTenant(t, "acme")
	tid := acme.Tenant.ID
	path := "/internal/v1/tenants/" + tid + "/plan"

	r := gw.do(t, http.MethodGet, path, "", nil)
	require.Equal(t, 200, r.status, "body: %s", r.body)
	tp := decodeAs[wire.TenantPlan](t, r)
	require.Equal(t, tid, tp.TenantID)
	require.Equal(t, billing.FreePlan, tp.Plan.Name)
	require.Nil(t, tp.Next)
	require.ElementsMatch(t, []string{"tenant_id", "plan", "since"}, keysOf(decodeAs[map[string]any](t, r)))

	require.Equal(t, 201, b.do(t, http.MethodPost, "/control/v1/plans", b.op, proPlan()).status)
	requireError(t, b.do(t, http.MethodPut, "/control/v1/tenants/"+tid+"/plan", b.op, map[string]string{"plan": "nope"}), 400, "bad_request", "plan")
	requireError(t, b.do(t, http.MethodPut, "/control/v1/tenants/"+unknownTID+"/plan", b.op, map[string]string{"plan": "pro"}), 404, "not_found")
	requireError(t, gw.do(t, http.MethodGet, "/internal/v1/tenants/"+unknownTID+"/plan", "", nil), 404, "not_found")
	r = b.do(t, http.MethodPut, "/control/v1/tenants/"+tid+"/plan", b.op, map[string]string{"plan": "pro"})
	require.Equal(t, 200, r.status, "body: %s", r.body)
	tp = decodeAs[wire.TenantPlan](t, r)
	require.Equal(t, billing.FreePlan, tp.Plan.Name, "still free this hour")
	require.NotNil(t, tp.Next)
	require.Equal(t, "pro", tp.Next.Name)
	next := time.Date(2026, 3, 10, 13, 0, 0, 0, time.UTC)
	require.True(t, tp.NextFrom.Equal(next))

	clk.Advance(40 * time.Minute) // 13:00
	r = gw.do(t, http.MethodGet, path, "", nil)
	tp = decodeAs[wire.TenantPlan](t, r)
	require.Equal(t, "pro", tp.Plan.Name)
	require.True(t, tp.Since.Equal(next))
	require.Nil(t, tp.Next)

	// A move back within the hour undoes the pending change.
	require.Equal(t, 200, b.do(t, http.MethodPut, "/control/v1/tenants/"+tid+"/plan", b.op, map[string]string{"plan": "free"}).status)
	r = b.do(t, http.MethodPut, "/control/v1/tenants/"+tid+"/plan", b.op, map[string]string{"plan": "pro"})
	tp = decodeAs[wire.TenantPlan](t, r)
	require.Equal(t, "pro", tp.Plan.Name)
	require.Nil(t, tp.Next, "back to pro before free took effect: nothing pending")
}

// A tenant created on a plan is on it from its creation; a plan that
// does not exist is a 400 naming plan, and nothing is created.
func TestHTTPTenantCreatedOnPlan(t *testing.T) {
	t.Parallel()
	clk := clockwork.NewFakeClockAt(planStart)
	b := setup(t, func(c *Config) { c.Clock = clk })
	gw := b.as(t, pkitest.Gateway)

	requireError(t, b.do(t, http.MethodPost, "/control/v1/tenants", b.op, map[string]string{"name": "acme", "plan": "pro"}), 400, "bad_request", "plan")
	r := b.do(t, http.MethodGet, "/control/v1/tenants", b.op, nil)
	require.Empty(t, decodeAs[wire.TenantList](t, r).Tenants, "a refused tenant is not created")

	require.Equal(t, 201, b.do(t, http.MethodPost, "/control/v1/plans", b.op, proPlan()).status)
	r = b.do(t, http.MethodPost, "/control/v1/tenants", b.op, map[string]string{"name": "acme", "plan": "pro"})
	require.Equal(t, 201, r.status, "body: %s", r.body)
	tid := decodeAs[wire.CreatedTenant](t, r).Tenant.ID
	tp := decodeAs[wire.TenantPlan](t, gw.do(t, http.MethodGet, "/internal/v1/tenants/"+tid+"/plan", "", nil))
	require.Equal(t, "pro", tp.Plan.Name, "on its plan from its creation")
	require.True(t, tp.Since.Equal(planStart), "since its creation: %s", tp.Since)
	require.Nil(t, tp.Next)

	r = b.do(t, http.MethodPost, "/control/v1/tenants", b.op, map[string]string{"name": "bravo", "plan": "free"})
	require.Equal(t, 201, r.status, "body: %s", r.body)
	tid = decodeAs[wire.CreatedTenant](t, r).Tenant.ID
	require.Equal(t, billing.FreePlan, decodeAs[wire.TenantPlan](t, gw.do(t, http.MethodGet, "/internal/v1/tenants/"+tid+"/plan", "", nil)).Plan.Name)
}

// The quota a gateway enforces: the limits of the plan in effect and,
// under a monthly cap, the month's executions from the ledger.
func TestHTTPQuota(t *testing.T) {
	t.Parallel()
	clk := clockwork.NewFakeClockAt(planStart)
	b := setup(t, noPulls, func(c *Config) { c.Clock = clk })
	gw := b.as(t, pkitest.Gateway)
	tid := b.newTenant(t, "acme").Tenant.ID
	path := "/internal/v1/tenants/" + tid + "/quota"

	r := gw.do(t, http.MethodGet, path, "", nil)
	require.Equal(t, 200, r.status, "body: %s", r.body)
	require.Equal(t, wire.TenantQuota{TenantID: tid, Plan: billing.FreePlan, Month: time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)}, decodeAs[wire.TenantQuota](t, r))
	requireError(t, b.do(t, http.MethodGet, path, b.op, nil), 401, "unauthenticated")
	requireError(t, gw.do(t, http.MethodGet, "/internal/v1/tenants/"+unknownTID+"/quota", "", nil), 404, "not_found")

	require.Equal(t, 201, b.do(t, http.MethodPost, "/control/v1/plans", b.op, proPlan()).status)
	require.Equal(t, 200, b.do(t, http.MethodPut, "/control/v1/tenants/"+tid+"/plan", b.op, map[string]string{"plan": "pro"}).status)
	put(t, b.srv, "s1", time.Time{},
		entry(tid, "default", time.Date(2026, 2, 28, 23, 0, 0, 0, time.UTC), runs(1000)), // last month's
		entry(tid, "default", time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC), runs(7)),
		entry(tid, "other", time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC), runs(5)))
	clk.Advance(time.Hour)
	q := decodeAs[wire.TenantQuota](t, gw.do(t, http.MethodGet, path, "", nil))
	require.Equal(t, "pro", q.Plan)
	require.Equal(t, int64(5000000), *q.Limits.MonthlyExecutions)
	require.Equal(t, int64(12), q.Executions)
}

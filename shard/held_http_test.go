package shard

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// heldWorld is a node where budget "a" holds jobs of queue qa, budget
// "b" those of qb, and a job of queue dep waits held for its dependency.
type heldWorld struct {
	a, bb []string
	dep   string
}

func seedHeld(b *bundle, nA int) heldWorld {
	b.t.Helper()
	for _, bg := range []map[string]any{
		{"name": "a", "scope": "queue", "queue": "qa", "daily_cost_usd": "1", "on_exceed": "hold"},
		{"name": "b", "scope": "queue", "queue": "qb", "daily_tokens": 10, "on_exceed": "hold"},
	} {
		r := b.call("POST", "/api/v1/ai/budgets", bg)
		require.Equal(b.t, 201, r.Status, string(r.Raw))
	}
	for _, s := range []struct {
		queue string
		usage map[string]any
	}{{"qa", map[string]any{"cost_usd": "1"}}, {"qb", map[string]any{"input_tokens": 10}}} {
		id := b.enqueue(map[string]any{"queue": s.queue})
		f := b.fetch([]string{s.queue}, nil)
		require.Equal(b.t, id, f.Body["job_id"], string(f.Raw))
		a := b.call("POST", "/api/v1/ack/"+id, map[string]any{"worker_id": "w1", "usage": s.usage})
		require.Equal(b.t, 200, a.Status, string(a.Raw))
	}
	var w heldWorld
	for range nA {
		w.a = append(w.a, b.enqueue(map[string]any{"queue": "qa"}))
	}
	for range 3 {
		w.bb = append(w.bb, b.enqueue(map[string]any{"queue": "qb"}))
	}
	parent := b.enqueue(map[string]any{"queue": "dep"})
	w.dep = b.enqueue(map[string]any{"queue": "dep", "depends_on": []string{parent}})
	for _, id := range append(append([]string{w.dep}, w.a...), w.bb...) {
		require.Equal(b.t, "held", b.job(id)["state"], id)
	}
	return w
}

// Search finds held jobs by what holds them: held_reason "budget" leaves
// out a job its dependencies hold, held_budget names one budget; the
// hits say what holds them, pages follow, and a bad value is a 400
// naming the field.
func TestSearchHeldByBudget(t *testing.T) {
	t.Parallel()
	b := setup(t)
	w := seedHeld(b, 7)

	all := b.searchAll(map[string]any{"state": []string{"held"}, "order": "asc"})
	require.ElementsMatch(t, append(append([]string{w.dep}, w.a...), w.bb...), all)
	byBudget := b.searchAll(map[string]any{"held_reason": "budget", "order": "asc"})
	require.Equal(t, append(append([]string{}, w.a...), w.bb...), byBudget, "the dependency's job has no reason")
	require.Equal(t, w.a, b.searchAll(map[string]any{"held_budget": "a", "order": "asc", "limit": 3}), "three pages")
	require.Equal(t, w.bb, b.searchAll(map[string]any{"held_reason": "budget", "held_budget": "b", "state": []string{"held", "pending"}, "order": "asc"}))
	require.Empty(t, b.searchAll(map[string]any{"held_budget": "none"}))
	require.Empty(t, b.searchAll(map[string]any{"held_budget": "a", "queue": "qb"}))

	_, r := b.search(map[string]any{"held_budget": "b", "limit": 1})
	hit := r.Body["jobs"].([]any)[0].(map[string]any)
	require.Equal(t, "budget", hit["held_reason"], string(r.Raw))
	require.Equal(t, "b", hit["held_budget"])
	_, r = b.search(map[string]any{"job_id_prefix": w.dep})
	require.NotContains(t, r.Body["jobs"].([]any)[0], "held_reason", "its dependency holds it: %s", r.Raw)

	for _, bad := range []struct {
		body  map[string]any
		field string
	}{
		{map[string]any{"held_reason": "dependencies"}, "held_reason"},
		{map[string]any{"held_reason": ""}, "held_reason"},
		{map[string]any{"held_reason": "budget", "state": []string{"pending"}}, "held_reason"},
		{map[string]any{"held_budget": string(make([]byte, 65))}, "held_budget"},
	} {
		r := b.call("POST", "/api/v1/jobs/search", bad.body)
		require.Equal(t, 400, r.Status, "%v: %s", bad.body, r.Raw)
		require.Equal(t, bad.field, r.Body["error"].(map[string]any)["field"], string(r.Raw))
	}
}

// Bulk approve and reject by filter act on the jobs a budget holds: a
// job held for its dependencies is skipped; over the synchronous limit
// approve runs in the background and its operation counts what it did.
func TestBulkApproveAndRejectHeldJobs(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *Config) { c.BulkSyncMax, c.BulkChunk = 10, 4 })
	w := seedHeld(b, 12)

	r := b.bulk(map[string]any{"filter": map[string]any{"held_reason": "nope"}, "action": "approve"})
	require.Equal(t, 400, r.Status, string(r.Raw))
	require.Equal(t, "filter.held_reason", r.Body["error"].(map[string]any)["field"])

	r = b.bulk(map[string]any{"filter": map[string]any{"held_budget": "b"}, "action": "reject"})
	require.Equal(t, 200, r.Status, string(r.Raw))
	require.Equal(t, 3.0, r.Body["affected"], string(r.Raw))
	for _, id := range w.bb {
		j := b.job(id)
		require.Equal(t, "cancelled", j["state"])
		require.Equal(t, "budget_rejected", j["cancel_reason"])
	}

	r = b.bulk(map[string]any{"job_ids": []string{w.dep, w.bb[0]}, "action": "approve"})
	require.Equal(t, 200, r.Status, string(r.Raw))
	require.Equal(t, 0.0, r.Body["affected"], string(r.Raw))
	require.Equal(t, 2.0, r.Body["skipped"], "no budget holds them: %s", r.Raw)
	require.Equal(t, "held", b.job(w.dep)["state"])

	r = b.bulk(map[string]any{"filter": map[string]any{"held_reason": "budget"}, "action": "approve"})
	require.Equal(t, 202, r.Status, "12 matches, over the limit of 10: %s", r.Raw)
	op := r.Body["bulk_operation_id"].(string)
	var final map[string]any
	eventually(t, 30e9, func() bool {
		g := b.call("GET", "/api/v1/bulk/"+op, nil)
		final = g.Body
		return g.Body["status"] == "completed"
	}, "the bulk approve completes")
	require.Equal(t, "approve", final["action"])
	require.Equal(t, 12.0, final["affected"], "%v", final)
	for _, id := range w.a {
		require.Equal(t, "pending", b.job(id)["state"], id)
	}
	f := b.fetch([]string{"qa"}, nil)
	require.Equal(t, w.a[0], f.Body["job_id"], "approved, it runs outside the budget: %s", f.Raw)
	require.Empty(t, b.searchAll(map[string]any{"held_reason": "budget"}))
	require.Equal(t, []string{w.dep}, b.searchAll(map[string]any{"state": []string{"held"}}))
}

// A per-job limit over HTTP: checked (400 naming the field, nothing
// stored), shown, and a job past a reject budget's fails for good.
func TestPerJobBudgetOverHTTP(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for _, bad := range []struct {
		body  map[string]any
		field string
	}{
		{map[string]any{"name": "x", "scope": "namespace", "per_job_cost_usd": "0", "on_exceed": "reject"}, "per_job_cost_usd"},
		{map[string]any{"name": "x", "scope": "namespace", "per_job_cost_usd": "1e3", "on_exceed": "reject"}, "per_job_cost_usd"},
		{map[string]any{"name": "x", "scope": "namespace", "per_job_tokens": -1, "on_exceed": "reject"}, "per_job_tokens"},
		{map[string]any{"name": "x", "scope": "namespace", "on_exceed": "reject"}, "daily_cost_usd"},
	} {
		r := b.call("POST", "/api/v1/ai/budgets", bad.body)
		require.Equal(t, 400, r.Status, "%v: %s", bad.body, r.Raw)
		require.Equal(t, bad.field, r.Body["error"].(map[string]any)["field"], string(r.Raw))
	}
	require.Equal(t, 404, b.call("GET", "/api/v1/ai/budgets/x", nil).Status, "nothing stored")
	r := b.call("POST", "/api/v1/ai/budgets", map[string]any{"name": "cap", "scope": "queue", "queue": "llm",
		"per_job_cost_usd": "0.50", "per_job_tokens": 1000, "on_exceed": "reject"})
	require.Equal(t, 201, r.Status, string(r.Raw))
	require.Equal(t, "0.5", r.Body["per_job_cost_usd"])
	require.Equal(t, 1000.0, r.Body["per_job_tokens"])
	require.Equal(t, false, r.Body["exceeded"], "per-job limits are no daily limit")

	id := b.enqueue(map[string]any{"queue": "llm", "max_retries": 5})
	require.Equal(t, id, b.fetch([]string{"llm"}, nil).Body["job_id"])
	f := b.call("POST", "/api/v1/fail/"+id, map[string]any{"worker_id": "w1", "error": "rate limited", "usage": map[string]any{"cost_usd": "0.51"}})
	require.Equal(t, 200, f.Status, string(f.Raw))
	require.Equal(t, "dead", f.Body["status"], string(f.Raw))
	j := b.job(id)
	require.Equal(t, "dead", j["state"])
	require.Equal(t, "budget_exceeded", j["dead_reason"])
}

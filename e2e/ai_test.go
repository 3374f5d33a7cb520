package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// Usage reported over three heartbeats and an ack sums exactly (no float
// sums: 0.1 + 0.2 + ...) in the job, in GET /ai/usage by every grouping
// and per step, in the tenant's meters and on the upcoming invoice; bad usage is a 400
// naming the field that changes nothing; another tenant learns nothing.
func TestAIUsageSumsExactlyEverywhere(t *testing.T) {
	t.Parallel()
	owner, ct := shared.tenant(t)
	key := ct.OwnerKey
	api := shared.gateway + "/api/v1"
	e := call(t, "POST", api+"/enqueue", key, map[string]any{"queue": "ai.llm", "tags": map[string]string{"team": "search"}})
	require.Equal(t, 201, e.Status, string(e.Raw))
	f := call(t, "POST", api+"/fetch", key, map[string]any{"queues": []string{"ai.llm"}, "worker_id": "w", "timeout": 5})
	require.Equal(t, 200, f.Status, string(f.Raw))
	id, lease := f.Body["job_id"].(string), f.Body["lease_token"].(string)

	// Bad usage refuses the call and changes nothing.
	for _, bad := range []struct {
		path  string
		body  map[string]any
		field string
	}{
		{"/ack/" + id, map[string]any{"worker_id": "w", "usage": map[string]any{"cost_usd": "1.2.3"}}, "usage.cost_usd"},
		{"/ack/" + id, map[string]any{"worker_id": "w", "usage": map[string]any{"cost_usd": "-1"}}, "usage.cost_usd"},
		{"/fail/" + id, map[string]any{"worker_id": "w", "error": "x", "usage": map[string]any{"output_tokens": -5}}, "usage.output_tokens"},
		{"/heartbeat", map[string]any{"worker_id": "w", "jobs": map[string]any{id: map[string]any{"usage": map[string]any{"input_tokens": 2e12}}}},
			"jobs." + id + ".usage.input_tokens"},
		{"/ack/batch", map[string]any{"worker_id": "w", "acks": []any{map[string]any{"job_id": id, "usage": map[string]any{"model": strings.Repeat("m", 200)}}}},
			"acks[0].usage.model"},
	} {
		r := call(t, "POST", api+bad.path, key, bad.body)
		require.Equal(t, 400, r.Status, "%s: %s", bad.path, r.Raw)
		require.Equal(t, bad.field, r.field(), string(r.Raw))
	}
	j := call(t, "GET", api+"/jobs/"+id, key, nil)
	require.Equal(t, "active", j.Body["state"])
	require.Nil(t, j.Body["usage"], "nothing reported yet")

	beat := func(in, out int, cost string) {
		r := call(t, "POST", api+"/heartbeat", key, map[string]any{"worker_id": "w", "jobs": map[string]any{id: map[string]any{
			"lease_token": lease, "usage": map[string]any{"input_tokens": in, "output_tokens": out, "cost_usd": cost, "model": "sonnet", "provider": "anthropic"}}}})
		require.Equal(t, 200, r.Status, string(r.Raw))
	}
	beat(1000, 100, "0.1")
	beat(2000, 200, "0.2")
	beat(3000, 300, "0.000000001")
	a := call(t, "POST", api+"/ack/"+id, key, map[string]any{"worker_id": "w", "lease_token": lease,
		"usage": map[string]any{"input_tokens": 4000, "output_tokens": 400, "cache_read_tokens": 50, "cache_write_tokens": 7, "cost_usd": "0.7"}})
	require.Equal(t, 200, a.Status, string(a.Raw))

	want := wire.AIUsage{InputTokens: 10000, OutputTokens: 1000, CacheReadTokens: 50, CacheWriteTokens: 7, CostUSD: "1.000000001",
		Model: "sonnet", Provider: "anthropic"}
	var detail wire.JobDetail
	j = call(t, "GET", api+"/jobs/"+id, key, nil)
	require.NoError(t, json.Unmarshal(j.Raw, &detail))
	require.Equal(t, &want, detail.Usage)

	group := wire.AIUsageGroup{Reports: 4, InputTokens: 10000, OutputTokens: 1000, CacheReadTokens: 50, CacheWriteTokens: 7, CostUSD: "1.000000001"}
	for by, k := range map[string]string{"queue": "ai.llm", "model": "sonnet", "tag": "team=search", "namespace": "default", "": "default"} {
		r := call(t, "GET", api+"/ai/usage?group_by="+by, key, nil)
		require.Equal(t, 200, r.Status, string(r.Raw))
		var u wire.AIUsageResponse
		require.NoError(t, json.Unmarshal(r.Raw, &u))
		g := group
		g.Key = k
		require.Equal(t, []wire.AIUsageGroup{g}, u.Groups, "group_by=%s", by)
	}
	past := time.Now().UTC().Add(-72 * time.Hour)
	r := call(t, "GET", api+"/ai/usage?from="+past.Format(time.RFC3339)+"&to="+past.Add(time.Hour).Format(time.RFC3339), key, nil)
	require.Equal(t, 200, r.Status, string(r.Raw))
	require.Equal(t, []any{}, r.Body["groups"], "nothing in an hour without reports")
	// Per step through the gateway: every hour of the last 24, adding up
	// to the totals exactly.
	r = call(t, "GET", api+"/ai/usage?group_by=model&step=1h", key, nil)
	require.Equal(t, 200, r.Status, string(r.Raw))
	var steps wire.AIUsageResponse
	require.NoError(t, json.Unmarshal(r.Raw, &steps))
	require.Equal(t, "1h", steps.Step)
	require.Len(t, steps.Buckets, 24)
	var reports, cost int64
	for _, b := range steps.Buckets {
		for _, g := range b.Groups {
			require.Equal(t, "sonnet", g.Key)
			c, err := wire.ParseCostUSD(g.CostUSD)
			require.NoError(t, err)
			reports, cost = reports+g.Reports, cost+c
		}
	}
	require.Equal(t, []any{int64(4), int64(1_000_000_001)}, []any{reports, cost})
	for q, field := range map[string]string{"group_by=day": "group_by", "from=yesterday": "from", "from=2026-01-01T00:00:00Z&to=2026-03-01T00:00:00Z": "from",
		"step=90m": "step", "step=0h": "step", "step=32d": "step", "step=1w": "step"} {
		r := call(t, "GET", api+"/ai/usage?"+q, key, nil)
		require.Equal(t, 400, r.Status, "%s: %s", q, r.Raw)
		require.Equal(t, field, r.field(), q)
	}

	// The meters and the invoice: exact integers (cost in nano-dollars).
	eventually(t, usageLag, func() bool {
		r := call(t, http.MethodGet, api+"/usage", key, nil)
		require.Equal(t, 200, r.Status, string(r.Raw))
		var u wire.Usage
		require.NoError(t, json.Unmarshal(r.Raw, &u))
		return u.Totals.AICostUSD == "1.000000001" && u.Totals.AIInputTokens == 10000 && u.Totals.AIOutputTokens == 1000 &&
			u.Totals.AICacheReadTokens == 50 && u.Totals.AICacheWriteTokens == 7
	}, "the tenant's meters show the reported usage")
	eventually(t, usageLag, func() bool {
		r := call(t, http.MethodGet, api+"/invoices/upcoming", key, nil)
		require.Equal(t, 200, r.Status, string(r.Raw))
		var inv wire.Invoice
		require.NoError(t, json.Unmarshal(r.Raw, &inv))
		return sumOf(inv, "ai_cost_usd", "default") == 1_000_000_001 && sumOf(inv, "ai_input_tokens", "default") == 10000 &&
			sumOf(inv, "ai_cache_write_tokens", "default") == 7
	}, "the invoice's lines carry the reported usage")

	// usage.read: a viewer may not read it.
	viewer, err := owner.CreateKey(ctx(t), clientKey("viewer", tenancy.RoleViewer, "*"))
	require.NoError(t, err)
	require.Equal(t, http.StatusForbidden, call(t, "GET", api+"/ai/usage", viewer.Token, nil).Status)

	// Another tenant: the job does not exist, and it has no usage.
	_, other := shared.tenant(t)
	require.Equal(t, 404, call(t, "GET", api+"/jobs/"+id, other.OwnerKey, nil).Status)
	o := call(t, "GET", api+"/ai/usage?group_by=queue", other.OwnerKey, nil)
	require.Equal(t, 200, o.Status, string(o.Raw))
	require.Equal(t, []any{}, o.Body["groups"])
}

// A handler reports usage in one call per model call (JobContext.
// ReportUsage); the worker's heartbeats and its ack carry it over HTTP,
// and the job sums it exactly. (Over the gRPC stream:
// cmd/jobbie/ai_stream_test.go, against a dev serving gRPC.)
func TestAIUsageFromTheSDKWorker(t *testing.T) {
	t.Parallel()
	tr := client.TransportHTTP
	c, _ := shared.tenant(t)
	r, err := c.Enqueue(ctx(t), client.EnqueueRequest{Queue: "ai.sdk", Payload: 1})
	require.NoError(t, err)
	runCtx, stop := context.WithCancel(context.Background())
	w := client.NewWorker(c, client.WorkerConfig{Queues: []string{"ai.sdk"}, WorkerID: "ai-1", FetchTimeout: time.Second,
		HeartbeatInterval: 100 * time.Millisecond, Transport: tr},
		func(hctx context.Context, j *client.JobContext) (any, error) {
			if err := j.ReportUsage(client.AIUsage{InputTokens: 100, OutputTokens: 10, CostUSD: "0.1", Model: "haiku"}); err != nil {
				return nil, err
			}
			if err := j.ReportUsage(client.AIUsage{InputTokens: 1, CostUSD: "0.2"}); err != nil {
				return nil, err
			}
			// A heartbeat delivers the first two; wait for it on the server.
			for {
				d, err := c.GetJob(hctx, j.ID)
				if err != nil {
					return nil, err
				}
				if d.Usage != nil {
					break
				}
				select {
				case <-hctx.Done():
					return nil, hctx.Err()
				case <-time.After(20 * time.Millisecond):
				}
			}
			if err := j.ReportUsage(client.AIUsage{CostUSD: "x"}); err == nil {
				return nil, errors.New("a bad cost was taken")
			}
			return nil, j.ReportUsage(client.AIUsage{OutputTokens: 5, CostUSD: "0.000000001", Provider: "anthropic"})
		})
	done := make(chan error, 1)
	go func() { done <- w.Run(runCtx) }()
	var d *client.JobDetail
	eventually(t, 20*time.Second, func() bool {
		d, err = c.GetJob(ctx(t), r.JobID)
		return err == nil && d.State == "completed"
	}, "the job completed")
	stop()
	require.NoError(t, <-done)
	require.Equal(t, &client.AIUsage{InputTokens: 101, OutputTokens: 15, CostUSD: "0.300000001", Model: "haiku", Provider: "anthropic"}, d.Usage)
	u, err := c.GetAIUsage(ctx(t), client.AIUsageQuery{GroupBy: "model"})
	require.NoError(t, err)
	require.Len(t, u.Groups, 1)
	require.Equal(t, "0.300000001", u.Groups[0].CostUSD)
	require.Equal(t, "haiku", u.Groups[0].Key)
}

// A daily budget of $1 with hold: once the day's reports reach it, a new
// job is held (held_reason budget); approve runs it, reject cancels
// another. A reject budget refuses the enqueue with 429 naming it. Bad
// budgets are a 400 naming the field; another tenant sees no budget and
// cannot approve or reject the jobs.
func TestAIBudgetsHoldRejectAndApprove(t *testing.T) {
	t.Parallel()
	_, ct := shared.tenant(t)
	key := ct.OwnerKey
	api := shared.gateway + "/api/v1"
	b := call(t, "POST", api+"/ai/budgets", key, map[string]any{"name": "daily", "scope": "namespace", "daily_cost_usd": "1", "on_exceed": "hold"})
	require.Equal(t, 201, b.Status, string(b.Raw))
	require.Equal(t, "daily", b.Body["name"])
	require.Equal(t, false, b.Body["exceeded"])
	r := call(t, "POST", api+"/ai/budgets", key, map[string]any{"name": "llm-tokens", "scope": "queue", "queue": "budget.reject", "daily_tokens": 10, "on_exceed": "reject"})
	require.Equal(t, 201, r.Status, string(r.Raw))

	for _, bad := range []struct {
		body  map[string]any
		field string
	}{
		{map[string]any{"name": "x", "scope": "everything", "daily_cost_usd": "1", "on_exceed": "hold"}, "scope"},
		{map[string]any{"name": "x", "scope": "tag", "tag": "nokey", "daily_cost_usd": "1", "on_exceed": "hold"}, "tag"},
		{map[string]any{"name": "x", "scope": "namespace", "daily_cost_usd": "1.2.3", "on_exceed": "hold"}, "daily_cost_usd"},
		{map[string]any{"name": "x", "scope": "namespace", "on_exceed": "hold"}, "daily_cost_usd"},
		{map[string]any{"name": "x", "scope": "namespace", "daily_tokens": 5, "on_exceed": "panic"}, "on_exceed"},
		{map[string]any{"name": "a b", "scope": "namespace", "daily_tokens": 5, "on_exceed": "hold"}, "name"},
	} {
		r := call(t, "POST", api+"/ai/budgets", key, bad.body)
		require.Equal(t, 400, r.Status, "%v: %s", bad.body, r.Raw)
		require.Equal(t, bad.field, r.field(), string(r.Raw))
	}
	r = call(t, "POST", api+"/ai/budgets", key, map[string]any{"name": "daily", "scope": "namespace", "daily_tokens": 5, "on_exceed": "alert"})
	require.Equal(t, 409, r.Status, "taken: %s", r.Raw)
	l := call(t, "GET", api+"/ai/budgets", key, nil)
	require.Len(t, l.Body["budgets"], 2, "the refused ones were not stored: %s", l.Raw)

	// $1.10 reported today: the namespace's budget is reached.
	run := func(queue, cost string, tokens int) {
		e := call(t, "POST", api+"/enqueue", key, map[string]any{"queue": queue})
		require.Equal(t, 201, e.Status, string(e.Raw))
		f := call(t, "POST", api+"/fetch", key, map[string]any{"queues": []string{queue}, "worker_id": "w", "timeout": 5})
		require.Equal(t, 200, f.Status, string(f.Raw))
		a := call(t, "POST", api+"/ack/"+f.Body["job_id"].(string), key, map[string]any{"worker_id": "w",
			"usage": map[string]any{"cost_usd": cost, "input_tokens": tokens}})
		require.Equal(t, 200, a.Status, string(a.Raw))
	}
	early := call(t, "POST", api+"/enqueue", key, map[string]any{"queue": "budget.early"})
	require.Equal(t, 201, early.Status, string(early.Raw))
	run("budget.work", "0.6", 0)
	run("budget.work", "0.5", 0)
	g := call(t, "GET", api+"/ai/budgets/daily", key, nil)
	require.Equal(t, 200, g.Status, string(g.Raw))
	require.Equal(t, "1.1", g.Body["spent_today_usd"])
	require.Equal(t, true, g.Body["exceeded"])

	// A job pending since before is held as it is about to be fetched.
	nf := call(t, "POST", api+"/fetch", key, map[string]any{"queues": []string{"budget.early"}, "worker_id": "w", "timeout": 1})
	require.Equal(t, 204, nf.Status, string(nf.Raw))
	j := call(t, "GET", api+"/jobs/"+early.Body["job_id"].(string), key, nil)
	require.Equal(t, "held", j.Body["state"])
	require.Equal(t, "budget", j.Body["held_reason"])

	enqueue := func() string {
		e := call(t, "POST", api+"/enqueue", key, map[string]any{"queue": "budget.work"})
		require.Equal(t, 201, e.Status, string(e.Raw))
		return e.Body["job_id"].(string)
	}
	held, rejected := enqueue(), enqueue()
	j = call(t, "GET", api+"/jobs/"+held, key, nil)
	require.Equal(t, "held", j.Body["state"])
	require.Equal(t, "budget", j.Body["held_reason"])
	require.Equal(t, "daily", j.Body["held_budget"])
	s := call(t, "POST", api+"/jobs/search", key, map[string]any{"state": []string{"held"}})
	require.Equal(t, 200, s.Status, string(s.Raw))
	require.Len(t, s.Body["jobs"], 3, "held jobs are searchable: %s", s.Raw)

	// Another tenant: no such budget, no such job.
	_, other := shared.tenant(t)
	require.Equal(t, 404, call(t, "GET", api+"/ai/budgets/daily", other.OwnerKey, nil).Status)
	require.Equal(t, 404, call(t, "PUT", api+"/ai/budgets/daily", other.OwnerKey, map[string]any{"scope": "namespace", "daily_tokens": 1, "on_exceed": "hold"}).Status)
	require.Equal(t, 404, call(t, "DELETE", api+"/ai/budgets/daily", other.OwnerKey, nil).Status)
	require.Equal(t, 404, call(t, "POST", api+"/jobs/"+held+"/approve", other.OwnerKey, nil).Status)
	require.Equal(t, 404, call(t, "POST", api+"/jobs/"+rejected+"/reject", other.OwnerKey, nil).Status)
	o := call(t, "GET", api+"/ai/budgets", other.OwnerKey, nil)
	require.Equal(t, []any{}, o.Body["budgets"])

	// Approve runs it; reject cancels the other.
	a := call(t, "POST", api+"/jobs/"+held+"/approve", key, nil)
	require.Equal(t, 200, a.Status, string(a.Raw))
	require.Equal(t, "pending", a.Body["status"])
	f := call(t, "POST", api+"/fetch", key, map[string]any{"queues": []string{"budget.work"}, "worker_id": "w", "timeout": 5})
	require.Equal(t, held, f.Body["job_id"], "the approved job runs")
	require.Equal(t, 200, call(t, "POST", api+"/ack/"+held, key, map[string]any{"worker_id": "w"}).Status)
	x := call(t, "POST", api+"/jobs/"+rejected+"/reject", key, nil)
	require.Equal(t, 200, x.Status, string(x.Raw))
	require.Equal(t, "cancelled", x.Body["status"])
	j = call(t, "GET", api+"/jobs/"+rejected, key, nil)
	require.Equal(t, "cancelled", j.Body["state"])
	require.Equal(t, "budget_rejected", j.Body["cancel_reason"])
	require.Equal(t, 409, call(t, "POST", api+"/jobs/"+rejected+"/approve", key, nil).Status, "no budget holds it now")

	// Raising the limit lets new enqueues run.
	p := call(t, "PUT", api+"/ai/budgets/daily", key, map[string]any{"scope": "namespace", "daily_cost_usd": "5", "on_exceed": "hold"})
	require.Equal(t, 200, p.Status, string(p.Raw))
	require.Equal(t, false, p.Body["exceeded"])
	require.Equal(t, "pending", call(t, "GET", api+"/jobs/"+enqueue(), key, nil).Body["state"])

	// reject: 429 naming the budget, nothing stored.
	run("budget.reject", "0", 10)
	e := call(t, "POST", api+"/enqueue", key, map[string]any{"queue": "budget.reject"})
	require.Equal(t, 429, e.Status, string(e.Raw))
	require.Equal(t, "budget_exceeded", e.Body["error"].(map[string]any)["code"])
	require.Contains(t, e.Body["error"].(map[string]any)["message"], `"llm-tokens"`)
	q := call(t, "GET", api+"/queues/budget.reject", key, nil)
	require.Equal(t, 200, q.Status, string(q.Raw))
	require.Equal(t, 1.0, q.Body["counts"].(map[string]any)["completed"], "only the first job: %s", q.Raw)
	require.Equal(t, 0.0, q.Body["counts"].(map[string]any)["pending"], "%s", q.Raw)

	// Deleting removes it.
	require.Equal(t, 204, call(t, "DELETE", api+"/ai/budgets/daily", key, nil).Status)
	require.Equal(t, 404, call(t, "GET", api+"/ai/budgets/daily", key, nil).Status)
}

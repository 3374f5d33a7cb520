package e2e

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// `jobbie ai usage` shows the reported usage per group, and with --step
// per bucket; `jobbie held`
// lists the jobs a budget holds, approves one and rejects another.
func TestCLIAIUsageAndHeldJobs(t *testing.T) {
	t.Parallel()
	_, ct := shared.tenant(t)
	key := ct.OwnerKey
	api := shared.gateway + "/api/v1"
	env := cliEnv(key)
	b := call(t, "POST", api+"/ai/budgets", key, map[string]any{"name": "tiny", "scope": "queue", "queue": "cli.llm", "daily_tokens": 5, "on_exceed": "hold"})
	require.Equal(t, 201, b.Status, string(b.Raw))
	e := call(t, "POST", api+"/enqueue", key, map[string]any{"queue": "cli.llm"})
	require.Equal(t, 201, e.Status, string(e.Raw))
	f := call(t, "POST", api+"/fetch", key, map[string]any{"queues": []string{"cli.llm"}, "worker_id": "w", "timeout": 5})
	require.Equal(t, 200, f.Status, string(f.Raw))
	a := call(t, "POST", api+"/ack/"+f.Body["job_id"].(string), key, map[string]any{"worker_id": "w",
		"usage": map[string]any{"input_tokens": 7, "cost_usd": "0.25", "model": "opus"}})
	require.Equal(t, 200, a.Status, string(a.Raw))

	r := jobbie(t, env, nil, "ai", "usage", "--group-by", "model")
	requireOK(t, r, "ai usage")
	require.Regexp(t, `(?m)^MODEL\s+REPORTS\s+INPUT`, r.stdout)
	require.Regexp(t, `(?m)^opus\s+1\s+7\s+0\s+0\s+0\s+0\.25$`, r.stdout)
	requireFails(t, jobbie(t, env, nil, "ai", "usage", "--group-by", "day"), "a bad grouping", "group_by")
	// By step: a row per day bucket, then the totals.
	r = jobbie(t, env, nil, "ai", "usage", "--group-by", "model", "--step", "1d")
	requireOK(t, r, "ai usage --step")
	require.Regexp(t, `(?m)^START\s+MODEL\s+REPORTS\s+INPUT`, r.stdout)
	require.Regexp(t, `(?m)^\d{4}-\d\d-\d\dT\d\d:00:00Z\s+opus\s+1\s+7\s+0\s+0\s+0\s+0\.25$`, r.stdout)
	require.Regexp(t, `(?m)^total\s+opus\s+1\s+7\s+0\s+0\s+0\s+0\.25$`, r.stdout)
	require.Regexp(t, `steps of 1d\)`, r.stdout)
	requireFails(t, jobbie(t, env, nil, "ai", "usage", "--step", "90m"), "a step of minutes", "step")

	held, other := "", ""
	for _, p := range []*string{&held, &other} {
		e := call(t, "POST", api+"/enqueue", key, map[string]any{"queue": "cli.llm"})
		require.Equal(t, 201, e.Status, string(e.Raw))
		*p = e.Body["job_id"].(string)
	}
	r = jobbie(t, env, nil, "held", "list")
	requireOK(t, r, "held list")
	require.Regexp(t, `(?m)^`+held+`\s+cli\.llm\s+tiny\s`, r.stdout)
	require.Regexp(t, `(?m)^`+other+`\s+cli\.llm\s+tiny\s`, r.stdout)
	r = jobbie(t, env, nil, "held", "approve", held)
	requireOK(t, r, "held approve")
	require.Equal(t, held+" pending\n", r.stdout)
	r = jobbie(t, env, nil, "held", "reject", other)
	requireOK(t, r, "held reject")
	require.Equal(t, other+" cancelled\n", r.stdout)
	requireFails(t, jobbie(t, env, nil, "held", "reject", other), "a job no budget holds", "not held by a budget")
	r = jobbie(t, env, nil, "held", "list")
	requireOK(t, r, "held list")
	require.NotContains(t, r.stdout, held)
	require.NotContains(t, r.stdout, other)

	// By the budget's name: one bulk over the jobs it holds.
	var more []string
	for range 3 {
		e := call(t, "POST", api+"/enqueue", key, map[string]any{"queue": "cli.llm"})
		require.Equal(t, 201, e.Status, string(e.Raw))
		more = append(more, e.Body["job_id"].(string))
	}
	r = jobbie(t, env, nil, "held", "list", "--budget", "tiny")
	requireOK(t, r, "held list --budget")
	for _, id := range more {
		require.Regexp(t, `(?m)^`+id+`\s+cli\.llm\s+tiny\s`, r.stdout)
	}
	r = jobbie(t, env, nil, "held", "list", "--budget", "another")
	requireOK(t, r, "held list --budget another")
	require.NotContains(t, r.stdout, more[0])
	requireFails(t, jobbie(t, env, nil, "held", "approve", "--budget", "tiny", more[0]), "ids and a filter", "not both")
	r = jobbie(t, env, nil, "held", "reject", "--budget", "tiny", "--filter", `{"job_id_prefix":"`+more[0]+`"}`)
	requireOK(t, r, "held reject --budget --filter")
	require.Equal(t, "reject: 1 affected, 0 skipped, 0 errors\n", r.stdout)
	r = jobbie(t, env, nil, "held", "approve", "--all")
	requireOK(t, r, "held approve --all")
	require.Equal(t, "approve: 2 affected, 0 skipped, 0 errors\n", r.stdout)
	require.Equal(t, "cancelled", call(t, "GET", api+"/jobs/"+more[0], key, nil).Body["state"])
	for _, id := range more[1:] {
		require.Equal(t, "pending", call(t, "GET", api+"/jobs/"+id, key, nil).Body["state"], id)
	}
}

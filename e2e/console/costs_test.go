package console

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/tenancy"
)

// workWithUsage fetches the next job of queue with c and acks it with usage u,
// returning its id.
func workWithUsage(t *testing.T, c *client.Client, queue string, u *client.AIUsage) string {
	t.Helper()
	j, err := c.Fetch(ctx(t), client.FetchRequest{Queues: []string{queue}, Timeout: 10 * time.Second})
	require.NoError(t, err)
	require.NotNil(t, j, "no job of %s to work", queue)
	require.NoError(t, c.Ack(ctx(t), j.ID, nil, client.WithUsage(u)))
	return j.ID
}

// jobDetail reads a job through the API.
func jobDetail(t *testing.T, c *client.Client, id string) *client.JobDetail {
	t.Helper()
	d, err := c.GetJob(ctx(t), id)
	require.NoError(t, err)
	return d
}

// The Costs screen shows what workers reported on ack, per queue and per
// model, its total summed exactly ($0.10 + $0.20 is $0.30, not the float
// 0.30000000000000004), its chart is one request per range (step=1d for
// days, 1h for today), and the job detail shows a job's usage. A hold
// budget made in the Costs screen's dialog (a bad limit is shown under
// its field and makes nothing) is shown reached; the jobs enqueued past
// it are held, listed in Held jobs with the budget, and one approved
// there runs while the other, rejected, is cancelled; a job's own page
// approves it as well. A viewer has
// neither screen in its navigation; a billing key reads costs but may not
// create budgets.
func TestConsoleCostsAndHeldJobs(t *testing.T) {
	t.Parallel()
	tn := newTenant(t)
	_, err := tn.owner.Enqueue(ctx(t), client.EnqueueRequest{Queue: "ai.llm", Payload: map[string]int{"n": 1}, Tags: map[string]string{"team": "ml"}})
	require.NoError(t, err)
	llmJob := workWithUsage(t, tn.owner, "ai.llm", &client.AIUsage{InputTokens: 1200, OutputTokens: 350, CacheReadTokens: 800,
		CostUSD: "0.1", Model: "claude-sonnet", Provider: "anthropic"})
	tn.enqueue(t, "ai.embed", map[string]int{"n": 2})
	workWithUsage(t, tn.owner, "ai.embed", &client.AIUsage{InputTokens: 5000, CostUSD: "0.2", Model: "embed-small", Provider: "acme"})

	p := signedIn(t, tn.ownerKey, "/console/costs", "costs")
	p.waitText(`#costs-totals [data-stat="cost"]`, "$0.30")
	p.waitText(`#costs-totals [data-stat="input"]`, "6,200")
	p.waitText(`#costs-totals [data-stat="cache_read"]`, "800")
	p.waitText(`#costs-groups tr[data-group="ai.llm"] [data-col="cost"]`, "$0.10")
	p.waitText(`#costs-groups tr[data-group="ai.embed"] [data-col="cost"]`, "$0.20")
	assert.Equal(t, "1,200", p.text(`#costs-groups tr[data-group="ai.llm"] [data-col="input"]`))
	assert.Equal(t, "350", p.text(`#costs-groups tr[data-group="ai.llm"] [data-col="output"]`))
	assert.Equal(t, "ai.embed", eval[string](p, `document.querySelector('#costs-groups tbody tr').dataset.group`), "the costliest group first")
	assert.Equal(t, "$0.30", eval[string](p, query(`[data-chart="cost"]`)+`.dataset.total`))
	assert.Equal(t, 7, p.count(`[data-chart="cost"] circle.cost-point`), "a point per day of the last 7")
	// The chart is one request with step, not one per day.
	assert.Equal(t, []string{"1d"}, eval[[]string](p, `performance.getEntriesByType('resource').map((e) => new URL(e.name)).`+
		`filter((u) => u.pathname === '/api/v1/ai/usage' && u.searchParams.has('step')).map((u) => u.searchParams.get('step'))`))
	assert.Equal(t, 2, eval[int](p, `performance.getEntriesByType('resource').filter((e) => new URL(e.name).pathname === '/api/v1/ai/usage').length`),
		"the groups' request and the chart's")
	p.shot("costs")

	p.setValue("#costs-group", "model")
	p.waitText(`#costs-groups tr[data-group="claude-sonnet"] [data-col="cost"]`, "$0.10")
	p.waitText(`#costs-groups tr[data-group="embed-small"] [data-col="cost"]`, "$0.20")
	p.setValue("#costs-range", "today")
	p.waitText(`#costs-totals [data-stat="cost"]`, "$0.30")
	// A point per hour of today so far (the hour may have turned since the screen read it).
	p.until(waitTimeout, `((n, h) => n === h + 1 || n === h)(document.querySelectorAll('[data-chart="cost"] circle.cost-point').length, new Date().getUTCHours())`,
		"a point per hour of today")
	assert.Contains(t, eval[[]string](p, `performance.getEntriesByType('resource').map((e) => new URL(e.name).searchParams.get('step'))`), "1h",
		"today's chart asks by the hour")

	// The job's own usage on its detail.
	p.goTo("/console/jobs/" + llmJob)
	p.waitScreen("job")
	p.waitText("#job-usage-cost", "$0.10")
	assert.Equal(t, "1,200", p.text("#job-usage-input"))
	assert.Equal(t, "350", p.text("#job-usage-output"))
	assert.Equal(t, "800", p.text("#job-usage-cache-read"))
	assert.Equal(t, "0", p.text("#job-usage-cache-write"))
	assert.Equal(t, "claude-sonnet", p.text("#job-usage-model"))
	assert.Equal(t, "anthropic", p.text("#job-usage-provider"))
	p.shot("job-usage")

	// A hold budget on ai.llm below what it reported today.
	p.goTo("/console/costs")
	p.waitScreen("costs")
	p.click("#budget-new")
	p.waitFor("#budget-form")
	p.setValue("#budget-name", "llm-daily")
	p.setValue("#budget-scope", "queue")
	p.waitFor("#budget-queue")
	p.setValue("#budget-queue", "ai.llm")
	p.setValue("#budget-cost", "five cents")
	p.click("#budget-save")
	p.waitFor("#budget-daily_cost_usd-error")
	budgets, err := tn.owner.ListBudgets(ctx(t))
	require.NoError(t, err)
	assert.Empty(t, budgets, "a refused create made a budget")
	p.setValue("#budget-cost", "0.05")
	p.click("#budget-save")
	p.waitNoDialog("#budget-form")
	p.waitText("#budgets-notice", "Budget llm-daily created")
	row := `#budgets tr[data-budget="llm-daily"]`
	p.waitText(row+" .budget-spend", "$0.10 of $0.05")
	p.waitText(row+" .budget-scope", "queue ai.llm")
	assert.Equal(t, "true", eval[string](p, query(row)+".dataset.exceeded"))
	p.shot("costs-budget")

	// Past it, new jobs of ai.llm are held.
	approveID := tn.enqueue(t, "ai.llm", map[string]int{"n": 3})
	rejectID := tn.enqueue(t, "ai.llm", map[string]int{"n": 4})
	for _, id := range []string{approveID, rejectID} {
		d := jobDetail(t, tn.owner, id)
		require.Equal(t, "held", d.State)
		require.Equal(t, "budget", d.HeldReason)
	}

	p.click(mainNav + ` a[href="/console/held"]`)
	p.waitScreen("held")
	p.waitText(`#held tr[data-job="`+approveID+`"] .held-reason`, "budget llm-daily")
	p.waitText(`#held tr[data-job="`+rejectID+`"] .held-reason`, "budget llm-daily")
	p.waitText("#held-count", "2 held jobs")
	p.shot("held")

	p.click(`button[data-approve="` + approveID + `"]`)
	p.waitText("#held-confirm", "outside budget llm-daily")
	p.click("#held-confirm #confirm-ok")
	p.waitNoDialog()
	p.waitText("#held-notice", "Job "+approveID+" approved")
	p.waitGone(`#held tr[data-job="` + approveID + `"]`)
	assert.Equal(t, "pending", jobState(t, tn, approveID))
	// It runs: a worker gets it despite the budget, and it completes.
	assert.Equal(t, approveID, workWithUsage(t, tn.owner, "ai.llm", &client.AIUsage{CostUSD: "0.01"}))
	assert.Equal(t, "completed", jobState(t, tn, approveID))

	p.click(`button[data-reject="` + rejectID + `"]`)
	p.click("#held-confirm #confirm-ok")
	p.waitNoDialog()
	p.waitText("#held-notice", "Job "+rejectID+" rejected")
	p.waitText(`[data-screen="held"] .empty`, "No held jobs")
	d := jobDetail(t, tn.owner, rejectID)
	assert.Equal(t, "cancelled", d.State)
	assert.Equal(t, "budget_rejected", d.CancelReason)

	// A held job's own page names its budget and approves it too.
	thirdID := tn.enqueue(t, "ai.llm", map[string]int{"n": 5})
	require.Equal(t, "held", jobDetail(t, tn.owner, thirdID).State)
	p.goTo("/console/jobs/" + thirdID)
	p.waitScreen("job")
	p.waitText("#job-held-budget", "held by budget llm-daily")
	p.click("#job-approve")
	p.click("#job-decide-dialog #confirm-ok")
	p.waitNoDialog()
	p.waitText("#job-action-notice", "Approved: the job is pending")
	assert.Equal(t, "pending", jobState(t, tn, thirdID))
	p.waitGone("#job-approve") // the page reads the job again after the notice

	// A viewer sees neither screen; a billing key reads costs and budgets, and creates none.
	v := signedIn(t, tn.key(t, tenancy.RoleViewer).Token, "/console/", "dashboard")
	assert.Zero(t, v.count(mainNav+` a[href="/console/held"]`), "Held jobs shown to a viewer")
	assert.Zero(t, v.count(mainNav+` a[href="/console/costs"]`), "Costs shown to a viewer")
	b := signedIn(t, tn.key(t, tenancy.RoleBilling).Token, "/console/costs", "costs")
	b.waitText(`#costs-totals [data-stat="cost"]`, "$0.31")
	b.waitText(`#budgets tr[data-budget="llm-daily"] .budget-spend`, "$0.11 of $0.05")
	assert.Zero(t, b.count("#budget-new"), "New budget shown to a billing key")
	assert.Zero(t, b.count("[data-delete-budget]"), "Delete shown to a billing key")
}

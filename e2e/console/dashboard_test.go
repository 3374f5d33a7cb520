package console

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/client"
)

// dashWorld is a tenant with two queues in known states: dash.alpha with
// 2 pending, 1 active (held by the worker) and 2 completed; dash.beta with
// 3 pending and 1 dead job that failed with "smtp: timeout from relay".
type dashWorld struct {
	tn              *tenant
	workerID, host  string
	deadJob, active string
}

func newDashWorld(t *testing.T) *dashWorld {
	t.Helper()
	tn := newTenant(t)
	w := &dashWorld{tn: tn, workerID: "dash-worker-1", host: "host-dash-1"}
	wk := tn.owner.ForWorker(w.workerID)
	fetch := func(queue string) *client.Job {
		t.Helper()
		j, err := wk.Fetch(ctx(t), client.FetchRequest{Queues: []string{queue}, Hostname: w.host, Timeout: 5 * time.Second})
		require.NoError(t, err)
		require.NotNil(t, j, "no job to fetch from %s", queue)
		return j
	}

	// The dead job goes first into dash.beta, so the worker's fetch gets it.
	res, err := tn.owner.Enqueue(ctx(t), client.EnqueueRequest{Queue: "dash.beta", Payload: map[string]string{"to": "x"}, MaxRetries: new(0)})
	require.NoError(t, err)
	w.deadJob = res.JobID
	j := fetch("dash.beta")
	require.Equal(t, w.deadJob, j.ID)
	fr, err := wk.Fail(ctx(t), j.ID, "smtp: timeout from relay", "")
	require.NoError(t, err)
	require.Equal(t, "dead", fr.Status)
	tn.seed(t, "dash.beta", 3)

	tn.seed(t, "dash.alpha", 5)
	for range 2 {
		require.NoError(t, wk.Ack(ctx(t), fetch("dash.alpha").ID, nil))
	}
	w.active = fetch("dash.alpha").ID // stays active: the worker holds it
	return w
}

func cell(queue, col string) string {
	return fmt.Sprintf(`#dash-queues tr[data-queue=%q] td[data-col=%q]`, queue, col)
}

// The dashboard shows both queues with their counts, the totals, the
// worker, the cluster with its leader and the dead job among the recent
// failures; counts follow new jobs without a reload; it fits a phone and
// has a dark mode.
func TestConsoleDashboard(t *testing.T) {
	t.Parallel()
	w := newDashWorld(t)
	p := signedIn(t, w.tn.ownerKey, "/console/", "dashboard")

	want := map[[2]string]string{
		{"dash.alpha", "pending"}: "2", {"dash.alpha", "active"}: "1", {"dash.alpha", "completed"}: "2", {"dash.alpha", "dead"}: "0",
		{"dash.beta", "pending"}: "3", {"dash.beta", "active"}: "0", {"dash.beta", "completed"}: "0", {"dash.beta", "dead"}: "1",
	}
	for k, v := range want {
		assert.Equal(t, v, p.text(cell(k[0], k[1])), "%s %s", k[0], k[1])
	}
	assert.Equal(t, []string{"dash.alpha", "dash.beta"},
		eval[[]string](p, `[...document.querySelectorAll('#dash-queues tbody tr')].map((r) => r.dataset.queue)`), "queues by name")
	assert.Equal(t, "/console/queues/dash.alpha",
		eval[string](p, `document.querySelector('#dash-queues tr[data-queue="dash.alpha"] a').getAttribute('href')`))
	assert.Contains(t, p.text(cell("dash.alpha", "state")), "running")
	assert.Contains(t, p.text(`#dash-totals [data-stat="pending"]`), "5")
	assert.Contains(t, p.text(`#dash-totals [data-stat="dead"]`), "1")
	// Throughput buckets arrive with the queue list; the sparkline names its numbers.
	p.waitFor(`#dash-queues tr[data-queue="dash.alpha"] svg.sparkline[role="img"]`)
	assert.Regexp(t, `^completions per minute: \d+, \d+, \d+, \d+, \d+$`,
		eval[string](p, `document.querySelector('#dash-queues tr[data-queue="dash.alpha"] svg.sparkline').getAttribute('aria-label')`))

	p.waitText("#dash-workers", w.workerID)
	assert.Contains(t, p.text(fmt.Sprintf(`#dash-workers tr[data-worker=%q]`, w.workerID)), w.host)
	assert.Contains(t, p.text("#dash-workers h2"), "1 connected")
	assert.Contains(t, p.text(`#dash-totals [data-stat="workers"]`), "1")

	p.waitFor("#cluster-leader")
	leader := p.text("#cluster-leader")
	assert.NotEmpty(t, leader)
	assert.NotContains(t, leader, "none")
	assert.Contains(t, p.text("#cluster-health"), "healthy")
	assert.Contains(t, p.text(fmt.Sprintf(`#dash-cluster tr[data-node=%q]`, leader)), "leader")

	row := fmt.Sprintf(`#dash-failures tr[data-job=%q]`, w.deadJob)
	p.waitFor(row)
	failure := p.text(row)
	assert.Contains(t, failure, "dash.beta")
	assert.Contains(t, failure, "smtp: timeout from relay")
	assert.Contains(t, failure, "1/1")
	assert.Equal(t, "/console/jobs/"+w.deadJob, eval[string](p, query(row+" a")+".getAttribute('href')"))
	p.shot("dashboard")

	// Live: three more jobs change the counts in the open page, no reload.
	eval[bool](p, "(window.__sameDocument = true)")
	w.tn.seed(t, "dash.alpha", 3)
	p.waitText(cell("dash.alpha", "pending"), "5")
	p.waitText(`#dash-totals [data-stat="pending"]`, "8")
	assert.True(t, eval[bool](p, "window.__sameDocument === true"), "the page reloaded")

	p.setViewport(390, 844)
	p.waitScreen("dashboard")
	// The screen's own content fits its width: wide tables scroll inside
	// their cards. (The page as a whole is the frame's: TestSignInOnAPhone.)
	assert.True(t, eval[bool](p, `((s) => s.scrollWidth <= s.clientWidth)(document.querySelector('[data-screen="dashboard"]'))`),
		"the dashboard's content is wider than the screen")
	if w := eval[int](p, "document.documentElement.scrollWidth"); w > 390 {
		t.Logf("the page is %d px wide on a 390 px phone; the top bar needs %d px", w, eval[int](p, "document.querySelector('.topbar').scrollWidth"))
	}
	p.shot("dashboard-phone")

	p.setViewport(1280, 900)
	p.click("#theme-toggle")
	p.until(waitTimeout, `document.documentElement.dataset.theme === "dark"`, "dark mode")
	p.shot("dashboard-dark")
}

// A namespace of 1,000 queues: the dashboard is ready within a second,
// lists the first 50 by name, all 1,000 on request, and the filter finds
// any of them.
func TestConsoleDashboardManyQueues(t *testing.T) {
	t.Parallel()
	tn := newTenant(t)
	tn.spread(t, "many.q%04d", 1000)

	p := signedIn(t, tn.ownerKey, "/console/", "dashboard")
	p.reload()
	p.waitScreen("dashboard")
	ready := p.readyAt("dashboard")
	t.Logf("dashboard of 1,000 queues ready %.0f ms after the navigation began", ready)
	assert.Less(t, ready, 1000.0, "the dashboard of 1,000 queues took %.0f ms to be ready", ready)

	rows := "#dash-queues tbody tr"
	nRows := func(n int) string { return fmt.Sprintf("document.querySelectorAll(%s).length === %d", js(rows), n) }
	p.until(waitTimeout, nRows(50), "the first 50 queues")
	assert.Equal(t, "many.q0000", eval[string](p, query(rows)+".dataset.queue"))
	assert.Contains(t, p.text(`#dash-totals [data-stat="queues"]`), "1,000")
	assert.Contains(t, p.text("#queues-count"), "Showing 50 of 1,000")

	p.click("#queues-show-all")
	p.until(waitTimeout, nRows(1000), "all 1,000 queues")

	p.setValue("#queue-filter", "q011")
	p.until(waitTimeout, nRows(10), "the 10 queues matching q011")
	assert.Equal(t, "many.q0110", eval[string](p, query(rows)+".dataset.queue"))
	p.setValue("#queue-filter", "nothing-like-it")
	p.waitText(`[data-screen="dashboard"]`, "No queue name contains")
}

// The workers screen lists the worker with its host, queues and the job
// it holds, and the filter narrows the list.
func TestConsoleDashboardWorkersScreen(t *testing.T) {
	t.Parallel()
	w := newDashWorld(t)
	p := signedInThenOpen(t, w.tn.ownerKey, "/console/workers", "workers")
	row := fmt.Sprintf(`#workers-table tr[data-worker=%q]`, w.workerID)
	p.waitFor(row)
	text := p.text(row)
	assert.Contains(t, text, w.host)
	assert.Contains(t, text, "dash.alpha")
	assert.Contains(t, text, "active")
	assert.Equal(t, "1", p.text(row+` [data-col="active-jobs"]`))
	assert.Equal(t, "/console/jobs/"+w.active,
		eval[string](p, fmt.Sprintf(`document.querySelector(%s).getAttribute('href')`, js(row+` a[href^="/console/jobs/"]`))))
	p.shot("workers")

	p.setValue("#worker-filter", "no-such-worker")
	p.waitText(`[data-screen="workers"]`, "No worker matches")
	p.setValue("#worker-filter", "host-dash")
	p.waitFor(row)
	assert.Contains(t, p.path(), "/console/workers")
	assert.Contains(t, eval[string](p, "location.search"), "q=host-dash")

	// The worker finishing its job is an event: the active count follows it.
	require.NoError(t, w.tn.owner.ForWorker(w.workerID).Ack(ctx(t), w.active, nil))
	p.waitText(row+` [data-col="active-jobs"]`, "0")
}

// The live events screen shows a job's enqueue as it happens; Pause
// holds new events back, counting them, and Resume shows them.
func TestConsoleDashboardEventsScreen(t *testing.T) {
	t.Parallel()
	tn := newTenant(t)
	p := signedInThenOpen(t, tn.ownerKey, "/console/events", "events")
	assert.Equal(t, "open", eval[string](p, `document.querySelector('#events-stream').dataset.state`))

	first := tn.enqueue(t, "ev.one", map[string]int{"n": 1})
	row := func(id string) string { return fmt.Sprintf(`#events-table tr[data-job=%q][data-type="enqueued"]`, id) }
	p.waitFor(row(first))
	assert.Contains(t, p.text(row(first)), "ev.one")
	assert.Equal(t, "/console/jobs/"+first, eval[string](p, query(row(first)+" a")+".getAttribute('href')"))

	p.click("button#events-pause")
	p.waitText("button#events-pause", "Resume")
	second := tn.enqueue(t, "ev.two", map[string]int{"n": 2})
	p.waitText("#events-new", "1 new")
	assert.Equal(t, 0, p.count(row(second)), "a paused table shows a new event")

	p.click("button#events-pause")
	p.waitFor(row(second))
	assert.Equal(t, second, eval[string](p, `document.querySelector('#events-table tbody tr').dataset.job`), "newest first")
	p.waitGone("#events-new")
	p.shot("events")

	// The type filter hides the other types; the queue filter, other queues.
	p.setValue("#events-type", "completed")
	p.waitGone(row(first))
	p.setValue("#events-type", "")
	p.setValue("#events-queue", "ev.two")
	p.waitFor(row(second))
	p.waitGone(row(first))
}

package console

import (
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/tenancy"
)

// screenFits is a JavaScript condition: the screen's content is no wider
// than the screen (wide tables scroll inside their .table-wrap).
const screenFits = `((s) => s.scrollWidth <= s.clientWidth)(document.querySelector('[data-screen]'))`

// queueRowOrder is the queue names of the list's rows, top to bottom.
func queueRowOrder(p *page) []string {
	p.t.Helper()
	return eval[[]string](p, `[...document.querySelectorAll('#queues-table tbody tr')].map((tr) => tr.dataset.queue)`)
}

// The list shows each queue with its counts; a click on Pending sorts by
// it (most first, aria-sort descending), a second click flips it; the
// name filter narrows the rows; a pause shows in the row's status.
func TestConsoleQueuesListSortsAndFilters(t *testing.T) {
	t.Parallel()
	tn := newTenant(t)
	tn.seed(t, "ql.few", 1)
	tn.seed(t, "ql.many", 5)
	tn.seed(t, "ql.some", 3)
	_, err := tn.owner.PauseQueue(ctx(t), "ql.some")
	require.NoError(t, err)

	p := signedIn(t, tn.ownerKey, "/console/queues", "queues")
	p.waitFor(`#queues-table tr[data-queue="ql.many"]`)
	assert.Equal(t, []string{"ql.few", "ql.many", "ql.some"}, queueRowOrder(p), "by name first")
	assert.Equal(t, "5", p.text(`tr[data-queue="ql.many"] td[data-col="pending"]`))
	assert.Equal(t, "1", p.text(`tr[data-queue="ql.few"] td[data-col="pending"]`))
	assert.Contains(t, p.text(`tr[data-queue="ql.some"]`), "paused")
	assert.Equal(t, "ascending", eval[string](p, `document.querySelector('th[data-col="name"]').getAttribute('aria-sort')`))
	p.shot("queues")

	p.click(`th[data-col="pending"] button`)
	p.until(waitTimeout, `document.querySelector('th[data-col="pending"]').getAttribute('aria-sort') === 'descending'`, "pending sorted descending")
	assert.Equal(t, []string{"ql.many", "ql.some", "ql.few"}, queueRowOrder(p))
	assert.Equal(t, "none", eval[string](p, `document.querySelector('th[data-col="name"]').getAttribute('aria-sort')`))
	assert.Contains(t, eval[string](p, "location.search"), "sort=pending", "the sort is in the URL")

	p.click(`th[data-col="pending"] button`)
	p.until(waitTimeout, `document.querySelector('th[data-col="pending"]').getAttribute('aria-sort') === 'ascending'`, "pending sorted ascending")
	assert.Equal(t, []string{"ql.few", "ql.some", "ql.many"}, queueRowOrder(p))

	p.setValue("#queues-filter", "MAN")
	p.until(waitTimeout, `document.querySelectorAll('#queues-table tbody tr').length === 1`, "one row after filtering")
	assert.Equal(t, []string{"ql.many"}, queueRowOrder(p))
	assert.Contains(t, p.text("#queues-count"), "1 of 3 queues")

	// A new job shows without a reload (the event stream).
	tn.seed(t, "ql.many", 2)
	p.waitText(`tr[data-queue="ql.many"] td[data-col="pending"]`, "7")

	// On a phone the table scrolls inside its wrapper, not the page.
	p.setValue("#queues-filter", "")
	p.setViewport(390, 844)
	p.waitFor(`tr[data-queue="ql.few"]`)
	assert.True(t, eval[bool](p, screenFits), "the screen is wider than a phone")
	p.shot("queues-phone")
	p.setViewport(1280, 900)

	p.click(`tr[data-queue="ql.many"] a`)
	p.waitScreen("queue")
	assert.Equal(t, "/console/queues/ql.many", p.path())
}

// A namespace of 1,000 queues (one batch enqueue, a job in each): the
// list is ready in under a second and pages 50 at a time; the filter
// finds one among them. Not parallel: it times.
func TestConsoleQueuesThousandPagesFast(t *testing.T) {
	tn := newTenant(t)
	tn.spread(t, "qp.%04d", 1000)

	p := signedInThenOpen(t, tn.ownerKey, "/console/queues", "queues")
	ready := p.readyAt("queues")
	t.Logf("1,000 queues: the list ready %.0f ms after navigating", ready)
	assert.Less(t, ready, 1000.0, "the queues list took %.0f ms to be ready", ready)

	p.waitFor(`tr[data-queue="qp.0000"]`)
	assert.Equal(t, 50, p.count("#queues-table tbody tr"))
	assert.Contains(t, p.text(".pager"), "Page 1 of 20")
	p.click(`.pager button[aria-label="Next page"]`)
	p.waitFor(`tr[data-queue="qp.0050"]`)
	assert.Equal(t, 0, p.count(`tr[data-queue="qp.0000"]`))
	assert.Contains(t, eval[string](p, "location.search"), "page=2")

	p.setValue("#queues-filter", "qp.0999")
	p.waitFor(`tr[data-queue="qp.0999"]`)
	assert.Equal(t, 1, p.count("#queues-table tbody tr"))
	assert.Equal(t, 0, p.count(".pager"), "one page needs no pager")
}

// fetchOne is a worker's fetch from queue with a short wait: the job, or
// nil when the queue handed out none.
func fetchOne(t *testing.T, tn *tenant, queue string) *client.Job {
	t.Helper()
	j, err := tn.owner.ForWorker("qw-1").Fetch(ctx(t), client.FetchRequest{Queues: []string{queue}, Timeout: time.Second})
	require.NoError(t, err)
	return j
}

// Pause from the detail page: a worker gets nothing while paused; resume
// and it gets a job.
func TestConsoleQueuePauseResume(t *testing.T) {
	t.Parallel()
	tn := newTenant(t)
	tn.seed(t, "qd.pause", 2)
	p := signedIn(t, tn.ownerKey, "/console/queues/qd.pause", "queue")
	p.waitText("#queue-status", "active")
	p.waitText(`#queue-counts [data-state="pending"]`, "2")

	p.click("button#queue-pause")
	p.waitFor("button#queue-resume")
	p.waitText("#queue-status", "paused")
	q, err := tn.owner.GetQueue(ctx(t), "qd.pause")
	require.NoError(t, err)
	require.True(t, q.Paused, "the page's pause did not reach the API")
	assert.Nil(t, fetchOne(t, tn, "qd.pause"), "a worker got a job from a paused queue")

	p.click("button#queue-resume")
	p.waitFor("button#queue-pause")
	p.waitText("#queue-status", "active")
	j := fetchOne(t, tn, "qd.pause")
	require.NotNil(t, j, "no job after resume")
	// The fetch's event moves a job to active on the page.
	p.waitText(`#queue-counts [data-state="active"]`, "1")
	p.waitText(`#queue-counts [data-state="pending"]`, "1")

	// Each count links to the search panel's state filter.
	p.click(`#queue-counts [data-state="active"]`)
	p.until(waitTimeout, `location.search === '?state=active'`, "the count sets ?state=active")
	assert.Equal(t, "true", eval[string](p, `document.querySelector('#queue-counts [data-state="active"]').getAttribute('aria-current')`))
	p.shot("queue")
	p.setViewport(390, 844)
	p.waitFor("#queue-counts")
	assert.True(t, eval[bool](p, screenFits), "the screen is wider than a phone")
	p.shot("queue-phone")
}

// Concurrency 2 and a throttle set through their dialogs show on the page
// and through the API; a bad throttle shows the server's 400 in the
// dialog and changes nothing; defaults and description too.
func TestConsoleQueueSettingsDialogs(t *testing.T) {
	t.Parallel()
	tn := newTenant(t)
	tn.seed(t, "qd.set", 1)
	p := signedIn(t, tn.ownerKey, "/console/queues/qd.set", "queue")
	p.waitText("#queue-concurrency-value", "no limit")

	p.click("button#queue-concurrency")
	p.setValue("#concurrency-max", "2")
	p.click("#concurrency-form-save")
	p.waitNoDialog("#concurrency-form")
	p.waitText("#queue-concurrency-value", "2")
	q, err := tn.owner.GetQueue(ctx(t), "qd.set")
	require.NoError(t, err)
	require.NotNil(t, q.Concurrency)
	assert.EqualValues(t, 2, *q.Concurrency)

	p.click("button#queue-throttle")
	p.setValue("#throttle-rate", "30")
	p.setValue("#throttle-period", "60")
	p.click("#throttle-form-save")
	p.waitNoDialog("#throttle-form")
	p.waitText("#queue-throttle-value", "30 per 1m")
	q, err = tn.owner.GetQueue(ctx(t), "qd.set")
	require.NoError(t, err)
	require.NotNil(t, q.Throttle)
	assert.EqualValues(t, 30, q.Throttle.Rate)
	assert.Equal(t, "1m", q.Throttle.Period)

	// A period over 7 days: the server's 400, in the dialog, naming period.
	p.click("button#queue-throttle")
	p.setValue("#throttle-rate", "5")
	p.setValue("#throttle-period", "30d")
	p.click("#throttle-form-save")
	p.waitFor("#throttle-form .error")
	msg := p.text("#throttle-form .error")
	assert.Contains(t, msg, "period")
	assert.Equal(t, "true", eval[string](p, `document.querySelector('#throttle-period').getAttribute('aria-invalid')`))
	p.setValue("#throttle-period", "1m")
	p.setValue("#throttle-rate", "0")
	p.click("#throttle-form-save")
	p.waitText("#throttle-form .error", "rate must be")
	p.shot("queue-throttle-error")
	eval[bool](p, `(document.querySelector('#throttle-form button[type=button]:not(.dialog-extra)').click(), true)`) // Cancel
	p.waitNoDialog("#throttle-form")
	q, err = tn.owner.GetQueue(ctx(t), "qd.set")
	require.NoError(t, err)
	require.NotNil(t, q.Throttle)
	assert.EqualValues(t, 30, q.Throttle.Rate, "a refused throttle changed the queue")
	assert.Equal(t, "30 per 1m", p.text("#queue-throttle-value .v"))

	p.click("button#queue-defaults")
	p.setValue("#defaults-max-retries", "7")
	p.setValue("#defaults-retry-backoff", "linear")
	p.setValue("#defaults-retention", "72h")
	p.click("#defaults-form-save")
	p.waitNoDialog("#defaults-form")
	p.waitText(`#queue-defaults-list [data-field="max_retries"]`, "7")
	q, err = tn.owner.GetQueue(ctx(t), "qd.set")
	require.NoError(t, err)
	require.NotNil(t, q.Defaults.MaxRetries)
	assert.Equal(t, 7, *q.Defaults.MaxRetries)
	assert.Equal(t, "linear", *q.Defaults.RetryBackoff)
	assert.JSONEq(t, `"72h"`, string(q.Defaults.Retention))

	// The description is a PUT of the whole spec: the other settings stay.
	p.click("button#queue-description")
	p.setValue("#description-text", "Outbound email")
	p.click("#description-form-save")
	p.waitNoDialog("#description-form")
	p.waitText("#queue-description-text", "Outbound email")
	q, err = tn.owner.GetQueue(ctx(t), "qd.set")
	require.NoError(t, err)
	assert.Equal(t, "Outbound email", q.Description)
	require.NotNil(t, q.Concurrency)
	assert.EqualValues(t, 2, *q.Concurrency, "the description's PUT lost the concurrency")
	require.NotNil(t, q.Throttle, "the description's PUT lost the throttle")
	assert.Equal(t, 7, *q.Defaults.MaxRetries, "the description's PUT lost the defaults")

	// Removing the limit: DELETE .../concurrency.
	p.click("button#queue-concurrency")
	p.click("#concurrency-remove")
	p.waitNoDialog("#concurrency-form")
	p.waitText("#queue-concurrency-value", "no limit")
	q, err = tn.owner.GetQueue(ctx(t), "qd.set")
	require.NoError(t, err)
	assert.Nil(t, q.Concurrency)
}

// Clear asks first, saying how many jobs go, then removes the pending
// ones and leaves the active one.
func TestConsoleQueueClear(t *testing.T) {
	t.Parallel()
	tn := newTenant(t)
	tn.seed(t, "qd.clear", 4)
	require.NotNil(t, fetchOne(t, tn, "qd.clear")) // one active, three pending
	p := signedIn(t, tn.ownerKey, "/console/queues/qd.clear", "queue")
	p.waitText(`#queue-counts [data-state="pending"]`, "3")

	p.click("button#queue-clear")
	p.waitText("#clear-text", "3 pending")
	assert.Contains(t, p.text("#confirm-ok"), "Delete 3 jobs")
	p.click("#confirm-ok")
	p.waitText("#queue-notice", "Cleared 3 jobs")
	p.waitText(`#queue-counts [data-state="pending"]`, "0")
	q, err := tn.owner.GetQueue(ctx(t), "qd.clear")
	require.NoError(t, err)
	assert.EqualValues(t, 0, q.Counts.Pending)
	assert.EqualValues(t, 1, q.Counts.Active, "clear took the active job")
}

// Delete asks for the queue's name, then removes the queue and its jobs
// and goes back to the list.
func TestConsoleQueueDelete(t *testing.T) {
	t.Parallel()
	tn := newTenant(t)
	tn.seed(t, "qd.del", 2)
	tn.seed(t, "qd.keep", 1)
	p := signedIn(t, tn.ownerKey, "/console/queues/qd.del", "queue")
	p.click("button#queue-delete")
	p.waitFor("#delete-queue-name")
	assert.True(t, eval[bool](p, `document.querySelector('#delete-queue-ok').disabled`), "delete enabled before the name is typed")
	p.setValue("#delete-queue-name", "qd.del")
	p.click("#delete-queue-ok")
	p.waitScreen("queues")
	assert.Equal(t, "/console/queues", p.path())
	p.waitFor(`tr[data-queue="qd.keep"]`)
	assert.Equal(t, 0, p.count(`tr[data-queue="qd.del"]`))
	_, err := tn.owner.GetQueue(ctx(t), "qd.del")
	require.Error(t, err)
}

// A queue that does not exist, or one of another tenant, is "not found"
// (and the screen is ready).
func TestConsoleQueueNotFound(t *testing.T) {
	t.Parallel()
	other := newTenant(t)
	other.seed(t, "qd.secret", 1)
	tn := newTenant(t)
	p := signedIn(t, tn.ownerKey, "/console/queues/"+url.PathEscape("qd.secret"), "queue")
	p.waitText("#queue-not-found", "not found")
	assert.Equal(t, 0, p.count("button#queue-pause"))
	p.goTo("/console/queues/nope")
	p.waitScreen("queue")
	p.waitText("#queue-not-found", "not found")
}

// A viewer's session sees the queue but none of the buttons that change
// it; the server refuses them anyway.
func TestConsoleQueueViewerSeesNoActions(t *testing.T) {
	t.Parallel()
	tn := newTenant(t)
	tn.seed(t, "qd.view", 1)
	k := tn.key(t, tenancy.RoleViewer)
	p := signedIn(t, k.Token, "/console/queues/qd.view", "queue")
	p.waitText(`#queue-counts [data-state="pending"]`, "1")
	for _, sel := range []string{"#queue-pause", "#queue-resume", "#queue-drain", "#queue-clear", "#queue-delete",
		"#queue-concurrency", "#queue-throttle", "#queue-defaults", "#queue-description"} {
		assert.Equal(t, 0, p.count(sel), "a viewer sees %s", sel)
	}
	r := p.apiJSON("POST", "/api/v1/queues/qd.view/pause", map[string]any{}, csrf)
	assert.Equal(t, 403, r.Status, r.Body)
}

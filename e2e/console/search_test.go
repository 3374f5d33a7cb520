package console

import (
	"fmt"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// searchMakeDead enqueues n jobs to queue without retries, fetches them and
// fails each with errMsg, so they are dead, and returns their ids. Fails
// run in parallel: the background-bulk test needs more than ten thousand.
func searchMakeDead(t *testing.T, tn *tenant, queue string, n int, errMsg string) []string {
	t.Helper()
	zero := 0
	ids := make([]string, 0, n)
	for start := 0; start < n; start += wire.MaxBatchJobs {
		reqs := make([]client.EnqueueRequest, min(wire.MaxBatchJobs, n-start))
		for i := range reqs {
			reqs[i] = client.EnqueueRequest{Queue: queue, Payload: map[string]any{"n": start + i, "to": fmt.Sprintf("user%d@example.com", start+i)}, MaxRetries: &zero}
		}
		res, err := tn.owner.EnqueueBatch(ctx(t), client.BatchRequest{Jobs: reqs})
		require.NoError(t, err)
		ids = append(ids, res.JobIDs...)
	}
	w := tn.owner.ForWorker("w-" + queue)
	var failed atomic.Int64
	for failed.Load() < int64(n) {
		jobs, err := w.FetchBatch(ctx(t), client.FetchBatchRequest{Queues: []string{queue}, Max: wire.MaxFetchBatch, Timeout: time.Second})
		require.NoError(t, err)
		require.NotEmpty(t, jobs, "%d of %d jobs of %s failed; no more to fetch", failed.Load(), n, queue)
		work := make(chan string)
		var wg sync.WaitGroup
		errs := make(chan error, 1)
		for range 32 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for id := range work {
					res, err := w.Fail(ctx(t), id, errMsg, "")
					if err == nil && res.Status != client.StateDead {
						err = fmt.Errorf("job %s is %s after its failure, want dead", id, res.Status)
					}
					if err != nil {
						select {
						case errs <- err:
						default:
						}
						continue
					}
					failed.Add(1)
				}
			}()
		}
		for _, j := range jobs {
			work <- j.ID
		}
		close(work)
		wg.Wait()
		select {
		case err := <-errs:
			t.Fatal(err)
		default:
		}
	}
	return ids
}

// searchStates is how many of ids are in each state, read through the API.
func searchStates(t *testing.T, tn *tenant, ids []string) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, id := range ids {
		d, err := tn.owner.GetJob(ctx(t), id)
		require.NoError(t, err, id)
		out[d.State]++
	}
	return out
}

// searchCount is how many jobs match f, exactly (paging through every match).
func searchCount(t *testing.T, tn *tenant, f client.SearchFilter) int {
	t.Helper()
	n := 0
	for _, err := range tn.owner.SearchAll(ctx(t), client.SearchRequest{SearchFilter: f, Limit: wire.MaxSearchLimit}) {
		require.NoError(t, err)
		n++
	}
	return n
}

// waitSearchResults waits until the search shows its count of results, want.
func (p *page) waitSearchResults(want string) {
	p.t.Helper()
	p.until(waitTimeout, `(() => { const r = document.querySelector('.search-results');
  const s = document.querySelector('#search-summary');
  return r && r.dataset.loaded === 'true' && s && s.innerText.includes(`+js(want)+`); })()`, "the search shows "+want)
}

// searchInput is the value of the form control sel.
func (p *page) searchInput(sel string) string {
	p.t.Helper()
	return eval[string](p, query(sel)+".value")
}

// The scenario: of 60 dead jobs in a queue, the 50 that failed
// with "SMTP timeout" are found by their error text, all selected (by
// filter, not by page), retried in bulk after a confirmation that says
// how many and which; they are pending again and the other 10 still dead.
// The filters live in the URL, so a reload keeps them.
func TestConsoleSearchBulkRetryByErrorText(t *testing.T) {
	t.Parallel()
	tn := newTenant(t)
	smtp := searchMakeDead(t, tn, "emails.send", 50, "SMTP timeout talking to mx1")
	other := searchMakeDead(t, tn, "emails.send", 10, "mailbox full")

	p := signedInThenOpen(t, tn.ownerKey, "/console/dead", "dead")
	p.waitSearchResults("60 results")
	p.setValue("#search-queue", "emails.send")
	p.setValue("#search-error_contains", "SMTP")
	p.click("#search-submit")
	p.waitSearchResults("50 results")
	q, err := url.ParseQuery(strings.TrimPrefix(eval[string](p, "location.search"), "?"))
	require.NoError(t, err)
	assert.Equal(t, "SMTP", q.Get("error_contains"))
	assert.Equal(t, "emails.send", q.Get("queue"))
	assert.Equal(t, 50, p.count(".search-table tbody tr"))
	assert.Contains(t, p.text(".search-table tbody"), "SMTP timeout talking to mx1")
	assert.NotContains(t, p.text(".search-table tbody"), "mailbox full")

	// A reload keeps the filters: the form and the results.
	p.reload()
	p.waitScreen("dead")
	p.waitSearchResults("50 results")
	assert.Equal(t, "SMTP", p.searchInput("#search-error_contains"))
	assert.Equal(t, "emails.send", p.searchInput("#search-queue"))
	p.shot("search")

	p.click("#select-all-matching")
	p.waitText("#bulk-count", "all 50 matching")
	p.click("#bulk-retry")
	p.waitFor("#confirm-dialog #bulk-confirm-text")
	assert.Equal(t, `This will retry 50 dead jobs in emails.send matching error contains "SMTP".`, p.text("#bulk-confirm-text"))
	assert.Contains(t, p.text("#confirm-dialog"), "cannot be undone")
	assert.Contains(t, p.text("#confirm-ok"), "Retry 50 jobs")
	p.shot("bulk-confirm")
	p.click("#confirm-ok")
	// 50 matches are under the shard's background threshold: the answer
	// comes at once (TestConsoleSearchBulkRetryInBackground takes the other path).
	p.waitText("#bulk-done", "50 affected")
	assert.Contains(t, p.text("#bulk-done"), "0 skipped")
	p.waitSearchResults("0 results")

	assert.Equal(t, map[string]int{client.StatePending: 50}, searchStates(t, tn, smtp))
	assert.Equal(t, map[string]int{client.StateDead: 10}, searchStates(t, tn, other))
}

// A bulk retry matching more jobs than the shard does while the caller
// waits (wire.MaxBulkSync) runs in the background: the console follows
// its progress stream to 100 % and shows the final counts.
func TestConsoleSearchBulkRetryInBackground(t *testing.T) {
	if testing.Short() {
		t.Skip("makes more than ten thousand dead jobs")
	}
	t.Parallel()
	tn := newTenant(t)
	n := wire.MaxBulkSync + 50
	began := time.Now()
	searchMakeDead(t, tn, "emails.send", n, "SMTP timeout")
	other := searchMakeDead(t, tn, "emails.send", 10, "mailbox full")
	t.Logf("made %d dead jobs in %s", n+10, time.Since(began).Round(time.Millisecond))

	p := signedInThenOpen(t, tn.ownerKey, "/console/dead?queue=emails.send&error_contains=SMTP", "dead")
	p.until(waitTimeout, query(".search-table tbody tr"), "results")
	p.click("#select-all-matching")
	p.click("#bulk-retry")
	p.waitFor("#bulk-confirm-text")
	confirm := p.text("#bulk-confirm-text")
	assert.Contains(t, confirm, `dead jobs in emails.send matching error contains "SMTP"`)
	t.Logf("confirmation: %s", confirm)
	p.click("#confirm-ok")

	p.waitFor("#bulk-progress")
	assert.Equal(t, "progressbar", eval[string](p, query("#bulk-progress")+".getAttribute('role')"))
	p.until(60*time.Second, query("#bulk-done"), "the operation is done")
	assert.Equal(t, "100", eval[string](p, query("#bulk-progress")+".getAttribute('aria-valuenow')"))
	assert.Equal(t, "completed", eval[string](p, query("#bulk-progress")+".dataset.status"))
	want := fmt.Sprintf("%s affected", searchCommas(n))
	assert.Contains(t, p.text("#bulk-done"), want)
	assert.Zero(t, p.count("#bulk-run .error, #bulk-run [role=alert]"), "an error beside the success line: %q",
		eval[string](p, `[...document.querySelectorAll("#bulk-run .error, #bulk-run [role=alert]")].map((e) => e.textContent).join(" | ")`))
	p.shot("bulk-done")
	p.waitSearchResults("0 results")

	assert.Equal(t, n, searchCount(t, tn, client.SearchFilter{Queue: "emails.send", State: []string{client.StatePending}}))
	assert.Equal(t, map[string]int{client.StateDead: 10}, searchStates(t, tn, other))
}

// searchCommas writes 10050 as 10,050.
func searchCommas(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// A jq filter the server cannot parse shows the server's own message.
func TestConsoleSearchShowsTheServersMessageForBadJQ(t *testing.T) {
	t.Parallel()
	tn := newTenant(t)
	searchMakeDead(t, tn, "reports.gen", 2, "OOM killed")
	p := signedInThenOpen(t, tn.ownerKey, "/console/dead", "dead")
	p.waitSearchResults("2 results")

	r := p.apiJSON("POST", "/api/v1/jobs/search", map[string]any{"payload_jq": ".amount >"}, csrf)
	require.Equal(t, 400, r.Status, r.Body)
	var e struct {
		Error struct{ Message, Field string } `json:"error"`
	}
	r.decode(t, &e)
	require.Equal(t, "payload_jq", e.Error.Field)

	p.setValue("#search-payload_jq", ".amount >")
	p.click("#search-submit")
	p.waitText(".search-results .error", e.Error.Message)
	assert.Equal(t, "true", eval[string](p, query("#search-payload_jq")+".getAttribute('aria-invalid')"))

	// A number the form refuses never reaches the server.
	p.click("summary")
	p.setValue("#search-attempt_min", "two")
	p.click("#search-submit")
	p.waitText("#search-attempt_min-error", "whole number")
}

// The dead letter lists the dead jobs of every queue, with a summary per
// queue that filters the search; a viewer sees them without bulk actions.
func TestConsoleSearchDeadLetterListsEveryQueue(t *testing.T) {
	t.Parallel()
	tn := newTenant(t)
	dead := map[string][]string{
		"emails.send":  searchMakeDead(t, tn, "emails.send", 3, "SMTP timeout"),
		"reports.gen":  searchMakeDead(t, tn, "reports.gen", 2, "OOM killed"),
		"billing.sync": searchMakeDead(t, tn, "billing.sync", 1, "card declined"),
	}
	tn.seed(t, "emails.send", 4) // pending: not in the dead letter

	p := signedInThenOpen(t, tn.ownerKey, "/console/dead", "dead")
	p.waitSearchResults("6 results")
	rows := p.text(".search-table tbody")
	for queue, ids := range dead {
		assert.Contains(t, rows, queue)
		for _, id := range ids {
			assert.Contains(t, rows, id)
		}
	}
	assert.Equal(t, 6, p.count(".search-table tbody .badge.state-dead"))
	assert.Equal(t, "2", p.text(`.dead-queue[data-queue="reports.gen"] .count`))
	p.shot("dead")

	p.click(`.dead-queue[data-queue="reports.gen"]`)
	p.waitSearchResults("2 results")
	assert.Contains(t, eval[string](p, "location.search"), "queue=reports.gen")
	assert.NotContains(t, p.text(".search-table tbody"), "emails.send")

	// Live: a job dying in the queue is announced, not reloaded under the user.
	p.click(".search-table tbody tr:nth-child(1) .row-check")
	p.waitText("#bulk-count", "1 selected")
	searchMakeDead(t, tn, "reports.gen", 1, "OOM killed again")
	p.waitFor("#search-refresh")
	assert.Contains(t, p.text("#search-summary"), "2 results")
	assert.Equal(t, 1, p.count(".row-check:checked"), "the selection was kept")
	p.click("#search-refresh")
	p.waitSearchResults("3 results")
	p.waitGone("#search-refresh")

	// A phone: nothing is wider than the screen but the table, which
	// scrolls in its wrapper. The top bar is the frame's and measured by
	// its own tests: hidden here, so only this screen is measured.
	p.setViewport(390, 844)
	eval[bool](p, `(() => { document.querySelector('.topbar').style.display = 'none'; return true; })()`)
	p.until(waitTimeout, "document.documentElement.scrollWidth <= 390", "the dead letter fits a 390 px screen")
	p.shot("dead-phone")
	eval[bool](p, `(() => { document.querySelector('.topbar').style.display = ''; return true; })()`)

	viewer := tn.key(t, tenancy.RoleViewer)
	v := signedInThenOpen(t, viewer.Token, "/console/dead", "dead")
	v.waitSearchResults("7 results")
	assert.Zero(t, v.count("#select-all-matching, #bulk-retry, .row-check"), "a viewer is offered bulk actions")
}

// rowIDs is the job ids of the results' rows, in order.
func (p *page) rowIDs() []string {
	p.t.Helper()
	return eval[[]string](p, `[...document.querySelectorAll('.search-table tbody tr td.mono a')].map((a) => a.textContent)`)
}

// Results page with the API's cursors (Next, Previous), sort by a column
// header, and act on rows picked by hand: a move (asking for the target
// queue) and a priority change the dead jobs skip.
func TestConsoleSearchPagingSortingAndRowActions(t *testing.T) {
	t.Parallel()
	tn := newTenant(t)
	searchMakeDead(t, tn, "imports.csv", 25, "bad row")
	p := signedInThenOpen(t, tn.ownerKey, "/console/dead?limit=10&order=asc", "dead")
	p.waitSearchResults("25 results")
	assert.Equal(t, "ascending", eval[string](p, query("#sort-created_at")+".closest('th').getAttribute('aria-sort')"))
	first := p.rowIDs()
	require.Len(t, first, 10)

	p.click(`button[aria-label="Next page"]`)
	p.until(waitTimeout, "document.querySelector('.search-table tbody a').textContent !== "+js(first[0]), "page 2")
	second := p.rowIDs()
	require.Len(t, second, 10)
	assert.NotContains(t, first, second[0])
	p.click(`button[aria-label="Next page"]`)
	p.until(waitTimeout, "document.querySelectorAll('.search-table tbody tr').length === 5", "page 3 holds the last 5")
	assert.True(t, eval[bool](p, query(`button[aria-label="Next page"]`)+".disabled"), "Next on the last page")
	p.click(`button[aria-label="Previous page"]`)
	p.until(waitTimeout, "document.querySelector('.search-table tbody a').textContent === "+js(second[0]), "back on page 2")
	assert.Equal(t, second, p.rowIDs())

	// A header click sorts by it: created, newest first (the default, so the URL drops order).
	p.click("#sort-created_at")
	p.until(waitTimeout, query("#sort-created_at")+".closest('th').getAttribute('aria-sort') === 'descending'", "sorted newest first")
	p.waitSearchResults("25 results")
	assert.NotContains(t, eval[string](p, "location.search"), "order=")
	newest := p.rowIDs()
	assert.NotContains(t, first, newest[0], "newest first starts with one of the oldest")

	p.click(".search-table tbody tr:nth-child(1) .row-check")
	p.click(".search-table tbody tr:nth-child(2) .row-check")
	p.waitText("#bulk-count", "2 selected")
	p.click("#bulk-move")
	p.waitFor("#bulk-move-dialog #bulk-move-queue")
	p.setValue("#bulk-move-queue", "imports.v2")
	p.click("#bulk-move-next")
	p.waitText("#bulk-confirm-text", "This will move 2 selected jobs to imports.v2.")
	p.click("#confirm-ok")
	p.waitText("#bulk-done", "2 affected")
	for _, id := range newest[:2] {
		d, err := tn.owner.GetJob(ctx(t), id)
		require.NoError(t, err)
		assert.Equal(t, "imports.v2", d.Queue)
		assert.Equal(t, client.StateDead, d.State)
	}

	p.waitSearchResults("25 results")
	p.click(".search-table tbody tr:nth-child(3) .row-check")
	p.click("#bulk-priority")
	p.waitFor("#bulk-priority-dialog #bulk-priority-value")
	p.setValue("#bulk-priority-value", "critical")
	p.click("#bulk-priority-next")
	p.waitText("#bulk-confirm-text", "This will change the priority of 1 selected job to critical.")
	p.click("#confirm-ok")
	p.waitText("#bulk-done", "0 affected, 1 skipped")
}

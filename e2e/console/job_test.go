package console

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/tenancy"
)

// jobFetch fetches the one job waiting in queue as worker, and checks it
// is want.
func jobFetch(t *testing.T, tn *tenant, worker, queue, want string) *client.Job {
	t.Helper()
	j, err := tn.owner.ForWorker(worker).Fetch(ctx(t), client.FetchRequest{Queues: []string{queue}, Timeout: 5 * time.Second})
	require.NoError(t, err)
	require.NotNil(t, j, "no job in %s", queue)
	require.Equal(t, want, j.ID)
	return j
}

// jobFail fails job id as worker with msg.
func jobFail(t *testing.T, tn *tenant, worker, id, msg, backtrace string) *client.FailResult {
	t.Helper()
	r, err := tn.owner.ForWorker(worker).Fail(ctx(t), id, msg, backtrace)
	require.NoError(t, err)
	return r
}

// jobState is job id's state as the API says it.
func jobState(t *testing.T, tn *tenant, id string) string {
	t.Helper()
	j, err := tn.owner.GetJob(ctx(t), id)
	require.NoError(t, err)
	return j.State
}

// A job failed twice shows both attempts with their errors (and the first
// one's backtrace), its tags and its timeline; a third failure turns it
// dead on the open page (the event stream); Retry puts it back to pending
// live; a worker's progress and checkpoint show while it runs, and its
// result once it is acked.
func TestConsoleJobDetailAttemptsRetryLive(t *testing.T) {
	t.Parallel()
	tn := newTenant(t)
	const q = "jd.emails"
	res, err := tn.owner.Enqueue(ctx(t), client.EnqueueRequest{Queue: q, Payload: map[string]any{"to": "user@example.com", "template": "welcome"},
		MaxRetries: new(2), RetryBackoff: client.BackoffNone, Tags: map[string]string{"tenant": "acme", "region": "eu"}, UniqueKey: "welcome:42"})
	require.NoError(t, err)
	id := res.JobID

	jobFetch(t, tn, "w-one", q, id)
	r := jobFail(t, tn, "w-one", id, "SMTP timeout after 30s", "main.send()\n\tsmtp.go:42\nmain.run()\n\tmain.go:7")
	require.Equal(t, 2, r.AttemptsRemaining+1)
	jobFetch(t, tn, "w-two", q, id)
	jobFail(t, tn, "w-two", id, "connection refused by mx.example.com", "")

	p := signedIn(t, tn.ownerKey, "/console/jobs/"+id, "job")
	p.waitText("#job-state", "pending")
	assert.Contains(t, p.text("#job-state"), "attempt 2 of 3")
	assert.Contains(t, p.text("#job-queue"), q)
	assert.Contains(t, p.text("#job-tags"), "tenant=acme")
	assert.Contains(t, p.text("#job-tags"), "region=eu")
	assert.Contains(t, p.text("#job-unique"), "welcome:42")
	assert.Contains(t, p.text("#job-payload"), "user@example.com")

	// Both attempts, with their workers and errors; the backtrace is folded.
	assert.Equal(t, 2, p.count("#job-attempts tbody tr"))
	first := p.text(`#job-attempts tbody tr:nth-child(1)`)
	assert.Contains(t, first, "SMTP timeout after 30s")
	assert.Contains(t, first, "w-one")
	second := p.text(`#job-attempts tbody tr:nth-child(2)`)
	assert.Contains(t, second, "connection refused by mx.example.com")
	assert.Contains(t, second, "w-two")
	assert.False(t, eval[bool](p, query("#job-attempts details.job-backtrace")+".open"), "the backtrace shows unfolded")
	p.click("#job-attempts .job-backtrace summary")
	p.until(waitTimeout, query("#job-attempts details.job-backtrace")+".open", "the backtrace unfolded")
	p.waitText("#job-attempts .job-backtrace pre", "smtp.go:42")

	// The timeline: enqueued, each start and failure, with milliseconds.
	tl := p.text("#job-timeline")
	for _, want := range []string{"enqueued", "started by w-one (attempt 1)", "failed: SMTP timeout after 30s",
		"started by w-two (attempt 2)", "failed: connection refused by mx.example.com"} {
		assert.Contains(t, tl, want)
	}
	assert.Regexp(t, `\d\d:\d\d:\d\d\.\d{3}`, tl, "timeline times carry milliseconds")
	assert.False(t, p.visible("#job-retry"), "Retry offered for a pending job")
	assert.True(t, p.visible("#job-cancel"))
	p.shot("job")

	// A third failure: dead, shown without a reload.
	jobFetch(t, tn, "w-one", q, id)
	jobFail(t, tn, "w-one", id, "quota exceeded", "")
	p.waitText("#job-state", "dead")
	p.waitText("#job-timeline", "failed: quota exceeded")
	assert.Equal(t, 3, p.count("#job-attempts tbody tr"))
	assert.False(t, p.visible("#job-cancel"), "Cancel offered for a dead job")

	// Retry from the page.
	p.click("#job-retry")
	p.waitText("#job-state", "pending")
	assert.Equal(t, "pending", jobState(t, tn, id))
	p.waitText("#job-timeline", "retried by hand")

	// A worker reports progress and a checkpoint: they show while it runs.
	j := jobFetch(t, tn, "w-three", q, id)
	p.waitText("#job-state", "active")
	_, err = tn.owner.ForWorker("w-three").Heartbeat(ctx(t), map[string]client.HeartbeatJob{j.ID: {
		Progress: &client.Progress{Current: 450, Total: 1000, Message: "Sending batch"}, Checkpoint: json.RawMessage(`{"offset":450}`)}})
	require.NoError(t, err)
	p.until(waitTimeout, `document.querySelector('#job-progress [role="progressbar"]')?.getAttribute('aria-valuenow') === '450'`, "progress 450")
	assert.Contains(t, p.text("#job-progress"), "450/1,000")
	assert.Contains(t, p.text("#job-progress"), "Sending batch")
	p.waitText("#job-checkpoint", "offset")
	require.NoError(t, tn.owner.ForWorker("w-three").Ack(ctx(t), j.ID, map[string]any{"message_id": "m-123"}))
	p.waitText("#job-state", "completed")
	p.waitText("#job-result", "m-123")
}

// Move through the dialog (a queue of the namespace picked from the list),
// then Delete after confirming; another tenant's job is not found.
func TestConsoleJobMoveAndDelete(t *testing.T) {
	t.Parallel()
	tn := newTenant(t)
	id := tn.enqueue(t, "jm.from", map[string]int{"n": 1})
	tn.enqueue(t, "jm.to", map[string]int{"n": 2})

	p := signedIn(t, tn.ownerKey, "/console/jobs/"+id, "job")
	p.waitText("#job-queue", "jm.from")
	p.click("#job-move")
	p.waitFor("#move-dialog #move-queue")
	p.until(waitTimeout, `[...document.querySelectorAll('#move-queue option')].some((o) => o.value === 'jm.to')`, "jm.to offered")
	assert.Zero(t, p.count(`#move-queue option[value="jm.from"]`), "the job's own queue is offered")
	p.setValue("#move-queue", "jm.to")
	p.click("#move-submit")
	p.waitGone("#move-dialog[open]")
	p.waitText("#job-queue", "jm.to")
	p.waitText("#job-timeline", "moved jm.from → jm.to")
	got, err := tn.owner.GetJob(ctx(t), id)
	require.NoError(t, err)
	assert.Equal(t, "jm.to", got.Queue)

	// A queue typed in: one that does not exist yet.
	p.click("#job-move")
	p.waitFor("#move-queue")
	p.setValue("#move-queue", "__other__")
	p.setValue("#move-queue-name", "jm.brand-new")
	p.click("#move-submit")
	p.waitText("#job-queue", "jm.brand-new")

	// Delete asks first; Cancel in the dialog keeps the job.
	p.click("#job-delete")
	p.waitFor("#confirm-dialog[open]")
	assert.Contains(t, p.text("#confirm-dialog"), id)
	p.click(`#confirm-dialog .dialog-footer button:not(#confirm-ok)`)
	p.waitGone("#confirm-dialog[open]")
	assert.Equal(t, "pending", jobState(t, tn, id))
	p.click("#job-delete")
	p.click("#confirm-ok")
	p.waitFor("#job-deleted")
	_, err = tn.owner.GetJob(ctx(t), id)
	var apiErr *client.Error
	if assert.ErrorAs(t, err, &apiErr) {
		assert.Equal(t, http.StatusNotFound, apiErr.Status)
	}

	// Not found: a deleted job, and another tenant's.
	other := newTenant(t)
	theirs := other.enqueue(t, "jm.theirs", map[string]int{"n": 3})
	for _, gone := range []string{id, theirs} {
		p.goTo("/console/jobs/" + gone)
		p.waitScreen("job")
		p.waitFor("#job-not-found")
		assert.Zero(t, p.count("#job-payload"))
	}
}

// The enqueue dialog: bad JSON is refused with a message and sends
// nothing; a good job's result link opens its detail with what was set.
func TestConsoleJobEnqueueDialog(t *testing.T) {
	t.Parallel()
	tn := newTenant(t)
	tn.enqueue(t, "je.existing", map[string]int{"n": 1})
	p := signedIn(t, tn.ownerKey, "/console/", "dashboard")

	p.click("#enqueue-open")
	p.waitFor("#enqueue-dialog #enqueue-payload")
	p.until(waitTimeout, `[...document.querySelectorAll('#enqueue-queue option')].some((o) => o.value === 'je.existing')`, "je.existing offered")
	p.setValue("#enqueue-queue", "__other__")
	p.setValue("#enqueue-queue-name", "je.new")
	p.setValue("#enqueue-payload", `{"to": "a@example.com",}`)
	p.click("#enqueue-submit")
	p.waitFor("#enqueue-payload-error")
	assert.Contains(t, p.text("#enqueue-payload-error"), "not valid JSON")
	assert.Equal(t, "true", eval[string](p, `document.querySelector('#enqueue-payload').getAttribute('aria-invalid')`))
	assert.Zero(t, p.count("#enqueue-result"))
	page, err := tn.owner.Search(ctx(t), client.SearchRequest{SearchFilter: client.SearchFilter{Queue: "je.new"}})
	require.NoError(t, err)
	assert.Empty(t, page.Jobs, "a bad payload enqueued a job")

	// The server's refusal shows as it says it.
	p.setValue("#enqueue-payload", `{"to": "a@example.com"}`)
	p.setValue("#enqueue-queue-name", "bad queue name!")
	p.click("#enqueue-submit")
	p.waitFor("#enqueue-error")
	assert.Contains(t, strings.ToLower(p.text("#enqueue-error")), "queue")

	p.setValue("#enqueue-queue-name", "je.new")
	p.setValue("#enqueue-priority", "high")
	p.setValue("#enqueue-max-retries", "4")
	p.setValue("#enqueue-tags", "tenant=acme\nkind = welcome")
	p.setValue("#enqueue-when", "delay")
	p.setValue("#enqueue-delay", "10m")
	p.setValue("#enqueue-unique-key", "welcome:7")
	p.shot("enqueue")
	p.click("#enqueue-submit")
	p.waitFor("#enqueue-result a")
	id := strings.TrimSpace(p.text("#enqueue-result a"))
	require.True(t, strings.HasPrefix(id, "job_"), id)
	p.click("#enqueue-result a")
	p.waitGone("#enqueue-dialog[open]")
	p.waitScreen("job")
	assert.Equal(t, "/console/jobs/"+id, p.path())
	p.waitText("#job-state", "scheduled")
	assert.Contains(t, p.text("#job-state"), "attempt 0 of 5")
	assert.Contains(t, p.text("#job-tags"), "kind=welcome")
	assert.Contains(t, p.text("#job-unique"), "welcome:7")
	assert.Contains(t, p.text("#job-payload"), "a@example.com")

	got, err := tn.owner.GetJob(ctx(t), id)
	require.NoError(t, err)
	assert.Equal(t, "high", got.Priority)
	assert.Equal(t, 4, got.MaxRetries)
	assert.Equal(t, map[string]string{"tenant": "acme", "kind": "welcome"}, got.Tags)
	require.NotNil(t, got.ScheduledAt)
	assert.WithinDuration(t, time.Now().Add(10*time.Minute), *got.ScheduledAt, time.Minute)

	// The JSON viewer: a raw view, and a big object paged 50 keys at a time.
	big := map[string]int{}
	for i := range 120 {
		big[fmt.Sprintf("k%03d", i)] = i
	}
	bigID := tn.enqueue(t, "je.new", map[string]any{"items": big})
	p.goTo("/console/jobs/" + bigID)
	p.waitScreen("job")
	p.waitFor("#job-payload details.json-node")
	// "items" is at depth 1: open at first.
	p.until(waitTimeout, `document.querySelectorAll('#job-payload .json-children .json-children > .json-row .json-number').length === 50`, "50 keys shown")
	p.click("#job-payload .json-more")
	p.until(waitTimeout, `document.querySelectorAll('#job-payload .json-children .json-children > .json-row .json-number').length === 100`, "100 keys shown")
	p.click("#job-payload .json-raw")
	p.waitText("#job-payload pre", `"k119": 119`)
	p.click("#job-payload .json-copy")
	p.waitText("#job-payload .json-status", "Copied")

	// On a phone the dialog fits the screen.
	p.setViewport(390, 844)
	p.click("#enqueue-open")
	p.waitFor("#enqueue-dialog #enqueue-payload")
	assert.LessOrEqual(t, eval[float64](p, query("#enqueue-dialog")+".getBoundingClientRect().right"), 390.0, "the dialog is wider than the phone")
	assert.True(t, eval[bool](p, "document.documentElement.scrollWidth <= window.innerWidth"), "the page scrolls sideways on a phone")
	p.shot("enqueue-phone")
}

// A batch of 3 with 1 completed shows 1/3 on its page, with its jobs and
// callback; the list shows it and opens one by id; a job of it links its
// batch.
func TestConsoleJobBatchProgress(t *testing.T) {
	t.Parallel()
	tn := newTenant(t)
	reqs := make([]client.EnqueueRequest, 3)
	for i := range reqs {
		reqs[i] = client.EnqueueRequest{Queue: "jb.resize", Payload: map[string]int{"image": i}}
	}
	br, err := tn.owner.EnqueueBatch(ctx(t), client.BatchRequest{Jobs: reqs,
		Batch: &client.BatchOptions{CallbackQueue: "jb.done", CallbackPayload: map[string]string{"album": "a42"}}})
	require.NoError(t, err)
	require.NotEmpty(t, br.BatchID)
	j := jobFetch(t, tn, "w-b", "jb.resize", br.JobIDs[0])
	require.NoError(t, tn.owner.ForWorker("w-b").Ack(ctx(t), j.ID, nil))

	p := signedIn(t, tn.ownerKey, "/console/batches/"+br.BatchID, "batch")
	p.waitText("#batch-progress", "1/3")
	assert.Equal(t, "1", eval[string](p, `document.querySelector('#batch-progress [role="progressbar"]').getAttribute('aria-valuenow')`))
	assert.Contains(t, p.text("#batch-callback"), "jb.done")
	p.waitFor("#batch-jobs")
	assert.Equal(t, 3, p.count("#batch-jobs tbody tr"))
	p.waitText("#batch-states", "completed")
	p.shot("batch")

	// The state counts filter the jobs.
	p.click(`#batch-states button[aria-label="Show the completed jobs"]`)
	p.until(waitTimeout, `document.querySelectorAll('#batch-jobs tbody tr').length === 1`, "one completed job listed")
	assert.Contains(t, p.text("#batch-jobs"), br.JobIDs[0])

	// Live: a second completion moves the bar.
	j = jobFetch(t, tn, "w-b", "jb.resize", br.JobIDs[1])
	require.NoError(t, tn.owner.ForWorker("w-b").Ack(ctx(t), j.ID, nil))
	p.waitText("#batch-progress", "2/3")

	// A job of the batch links it.
	p.goTo("/console/jobs/" + br.JobIDs[2])
	p.waitScreen("job")
	p.waitText("#job-batch", br.BatchID)
	p.click("#job-batch")
	p.waitScreen("batch")

	// The list, and one opened by id.
	p.goTo("/console/batches")
	p.waitScreen("batches")
	p.waitText("#batches-table", br.BatchID)
	p.waitText("#batches-table", "2/3")
	p.setValue("#batch-id", br.BatchID)
	p.click("#batch-open")
	p.waitScreen("batch")
	p.goTo("/console/batches/batch_01J0000000000000000000000X")
	p.waitScreen("batch")
	p.waitFor("#batch-not-found")
}

// A chain's steps link each other: step 1 (completed) links step 2, which
// links back; each step's job shows the chain's steps in order with their
// jobs' states, from GET /api/v1/jobs/{id}/chain.
func TestConsoleJobChainLinks(t *testing.T) {
	t.Parallel()
	tn := newTenant(t)
	res, err := tn.owner.Enqueue(ctx(t), client.EnqueueRequest{Queue: "jc.one", Payload: map[string]int{"n": 1},
		Chain: &client.Chain{Steps: []client.ChainStep{{Queue: "jc.one"}, {Queue: "jc.two", Payload: map[string]int{"n": 2}}, {Queue: "jc.three"}},
			OnFailure: &client.ChainStep{Queue: "jc.alerts"}}})
	require.NoError(t, err)
	j := jobFetch(t, tn, "w-c", "jc.one", res.JobID)
	require.NoError(t, tn.owner.ForWorker("w-c").Ack(ctx(t), j.ID, map[string]string{"ok": "yes"}))

	p := signedIn(t, tn.ownerKey, "/console/jobs/"+res.JobID, "job")
	p.waitText("#job-chain", "step 1 of 3")
	p.waitFor("#job-chain-steps")
	p.waitText("#job-chain-status", "at step 2 of 3 (pending)")
	assert.Equal(t, 3, p.count("#job-chain-steps tbody tr"))
	row := func(i int) string { return p.text(fmt.Sprintf(`#job-chain-steps tbody tr[data-step="%d"]`, i)) }
	assert.Contains(t, row(0), "this job")
	assert.Contains(t, row(0), "completed")
	assert.Contains(t, row(1), "jc.two")
	assert.Contains(t, row(1), "pending")
	assert.Contains(t, row(2), "jc.three")
	assert.Contains(t, row(2), "not enqueued")
	assert.Contains(t, p.text("#job-chain-handlers"), "jc.alerts")
	p.shot("job-chain")

	p.waitFor("#job-chain-next")
	p.click("#job-chain-next")
	p.waitScreen("job")
	p.waitText("#job-queue", "jc.two")
	p.waitText("#job-chain", "step 2 of 3")
	p.waitFor("#job-chain-prev")
	assert.Contains(t, p.text("#job-chain-prev"), res.JobID)
	p.waitText("#job-payload", "previous_result")
	p.waitText(`#job-chain-steps tbody tr[data-step="1"]`, "this job")

	// Live: the second step starts, and the first step's page shows it.
	chain, err := tn.owner.GetChain(ctx(t), res.JobID)
	require.NoError(t, err)
	require.NotNil(t, chain.Steps[1].JobID)
	second := *chain.Steps[1].JobID
	p.goTo("/console/jobs/" + res.JobID)
	p.waitScreen("job")
	p.waitText(`#job-chain-steps tbody tr[data-step="1"]`, "pending")
	jobFetch(t, tn, "w-c", "jc.two", second)
	p.waitText(`#job-chain-steps tbody tr[data-step="1"]`, "active")
	p.waitText("#job-chain-status", "at step 2 of 3 (active)")
}

// A viewer sees the job but none of its actions, and no enqueue button.
func TestConsoleJobViewerSeesNoActions(t *testing.T) {
	t.Parallel()
	tn := newTenant(t)
	id := tn.enqueue(t, "jv.q", map[string]int{"n": 1})
	k := tn.key(t, tenancy.RoleViewer)
	p := signedIn(t, k.Token, "/console/jobs/"+id, "job")
	p.waitText("#job-state", "pending")
	for _, sel := range []string{"#job-retry", "#job-cancel", "#job-move", "#job-delete", "#enqueue-open"} {
		assert.Zero(t, p.count(sel), "%s shown to a viewer", sel)
	}
	// On a phone the page does not scroll sideways.
	p.setViewport(390, 844)
	p.waitFor("#job-payload")
	assert.True(t, eval[bool](p, "document.documentElement.scrollWidth <= window.innerWidth"), "the job detail scrolls sideways on a phone")
	p.shot("job-phone")
}

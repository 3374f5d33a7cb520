package console

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/client"
)

// Keyed fairness: the queue detail shows the per-key cap and sets it
// (with the whole-configuration PUT, which keeps the other settings) and
// takes it away; a job shows its concurrency and fairness keys, and the
// queue's search finds jobs by either.
func TestConsoleQueueKeyConcurrency(t *testing.T) {
	t.Parallel()
	tn := newTenant(t)
	res, err := tn.owner.Enqueue(ctx(t), client.EnqueueRequest{Queue: "qk.q", Payload: map[string]int{"n": 1}, ConcurrencyKey: "cust-1", FairnessKey: "tenant-7"})
	require.NoError(t, err)
	_, err = tn.owner.Enqueue(ctx(t), client.EnqueueRequest{Queue: "qk.q", Payload: map[string]int{"n": 2}, ConcurrencyKey: "cust-2", FairnessKey: "tenant-8"})
	require.NoError(t, err)
	two := int64(2)
	_, err = tn.owner.PutQueue(ctx(t), "qk.q", client.QueueSpec{Description: "keyed", Concurrency: &two})
	require.NoError(t, err)

	p := signedIn(t, tn.ownerKey, "/console/queues/qk.q", "queue")
	p.waitText("#queue-key-concurrency-value", "no limit")
	p.click("button#queue-key-concurrency")
	p.setValue("#key-concurrency-max", "0")
	p.click("#key-concurrency-form-save")
	p.waitFor("#key-concurrency-form .error")
	assert.Equal(t, "true", eval[string](p, `document.querySelector('#key-concurrency-max').getAttribute('aria-invalid')`))
	p.setValue("#key-concurrency-max", "3")
	p.click("#key-concurrency-form-save")
	p.waitNoDialog("#key-concurrency-form")
	p.waitText("#queue-key-concurrency-value", "3 per key")
	q, err := tn.owner.GetQueue(ctx(t), "qk.q")
	require.NoError(t, err)
	require.NotNil(t, q.KeyConcurrency)
	assert.EqualValues(t, 3, q.KeyConcurrency.Max)
	require.NotNil(t, q.Concurrency, "setting the per-key cap lost the concurrency")
	assert.EqualValues(t, 2, *q.Concurrency)
	assert.Equal(t, "keyed", q.Description)
	p.shot("queue-key-concurrency")

	// The description's PUT keeps the per-key cap.
	p.click("button#queue-description")
	p.setValue("#description-text", "keyed queue")
	p.click("#description-form-save")
	p.waitNoDialog("#description-form")
	q, err = tn.owner.GetQueue(ctx(t), "qk.q")
	require.NoError(t, err)
	require.NotNil(t, q.KeyConcurrency, "the description's PUT lost the per-key cap")

	// The search finds a job by either key: from the form's More filters, and from the URL.
	p.click("details.more-filters summary")
	p.setValue("#search-concurrency_key", "cust-1")
	p.click("#search-submit")
	p.waitSearchResults("1 result")
	assert.Contains(t, eval[string](p, "location.search"), "concurrency_key=cust-1")
	p.goTo("/console/queues/qk.q?fairness_key=tenant-8")
	p.waitScreen("queue")
	p.waitSearchResults("1 result")
	p.goTo("/console/queues/qk.q?fairness_key=nobody")
	p.waitScreen("queue")
	p.waitSearchResults("0 results")

	p.goTo("/console/queues/qk.q")
	p.waitScreen("queue")
	p.click("button#queue-key-concurrency")
	p.click("#key-concurrency-remove")
	p.waitNoDialog("#key-concurrency-form")
	p.waitText("#queue-key-concurrency-value", "no limit")
	q, err = tn.owner.GetQueue(ctx(t), "qk.q")
	require.NoError(t, err)
	assert.Nil(t, q.KeyConcurrency)
	require.NotNil(t, q.Concurrency)

	p.goTo("/console/jobs/" + res.JobID)
	p.waitScreen("job")
	p.waitText("#job-concurrency-key", "cust-1")
	p.waitText("#job-fairness-key", "tenant-7")
	p.shot("job-keys")
}

// The enqueue dialog sends a job's concurrency and fairness keys (under
// More options); the job detail shows them.
func TestConsoleQueueKeysEnqueued(t *testing.T) {
	t.Parallel()
	tn := newTenant(t)
	p := signedIn(t, tn.ownerKey, "/console/", "dashboard")
	p.click("#enqueue-open")
	p.setValue("#enqueue-queue", "__other__")
	p.setValue("#enqueue-queue-name", "qk.enq")
	p.setValue("#enqueue-payload", `{"n": 1}`)
	p.click("details.enqueue-more summary")
	p.setValue("#enqueue-concurrency-key", "cust-9")
	p.setValue("#enqueue-fairness-key", "tenant-3")
	p.click("#enqueue-submit")
	p.waitFor("#enqueue-result a")
	p.click("#enqueue-result a")
	p.waitScreen("job")
	p.waitText("#job-concurrency-key", "cust-9")
	p.waitText("#job-fairness-key", "tenant-3")
	id := p.path()[len("/console/jobs/"):]
	got, err := tn.owner.GetJob(ctx(t), id)
	require.NoError(t, err)
	assert.Equal(t, "cust-9", got.ConcurrencyKey)
	assert.Equal(t, "tenant-3", got.FairnessKey)
}

package shard

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/wire"
)

// batchIDs is the ids of a GET /api/v1/batches page, in order.
func batchIDs(t *testing.T, r resp) []string {
	t.Helper()
	require.Equal(t, 200, r.Status, string(r.Raw))
	var ids []string
	for _, v := range r.Body["batches"].([]any) {
		ids = append(ids, v.(map[string]any)["id"].(string))
	}
	return ids
}

// The namespace's batches are listed newest first, page by page, each
// with its counts and its callback's state once it fired; another
// namespace sees none, a limited scope sees only batches wholly inside
// it, and bad paging input is a 400 naming the field.
func TestListBatches(t *testing.T) {
	t.Parallel()
	b := setup(t)
	newBatch := func(queues ...string) (string, []string) {
		var jobs []map[string]any
		for _, q := range queues {
			jobs = append(jobs, map[string]any{"queue": q, "max_retries": 0})
		}
		r := b.call("POST", "/api/v1/enqueue/batch", map[string]any{"jobs": jobs, "batch": map[string]any{"callback_queue": "emails.done"}})
		require.Equal(t, 201, r.Status, string(r.Raw))
		var ids []string
		for _, id := range r.Body["job_ids"].([]any) {
			ids = append(ids, id.(string))
		}
		return r.Body["batch_id"].(string), ids
	}
	first, firstJobs := newBatch("emails.send", "emails.send")
	mixed, _ := newBatch("emails.send", "billing")
	last, _ := newBatch("emails.send")

	all := batchIDs(t, b.call("GET", "/api/v1/batches", nil))
	require.Equal(t, []string{last, mixed, first}, all, "newest first")

	// Paging: the cursor of a full page leads on, the last page has none.
	p1 := b.call("GET", "/api/v1/batches?limit=2", nil)
	require.Equal(t, []string{last, mixed}, batchIDs(t, p1))
	require.Equal(t, true, p1.Body["has_more"])
	p2 := b.call("GET", "/api/v1/batches?limit=2&cursor="+p1.Body["cursor"].(string), nil)
	require.Equal(t, []string{first}, batchIDs(t, p2))
	require.Equal(t, false, p2.Body["has_more"])
	require.Nil(t, p2.Body["cursor"])

	// Counts and the callback: finish the first batch's jobs.
	for range firstJobs {
		f := b.fetch([]string{"emails.send"}, nil)
		require.Equal(t, 200, f.Status, string(f.Raw))
		id := f.Body["job_id"].(string)
		if id == firstJobs[0] {
			require.Equal(t, 200, b.call("POST", "/api/v1/ack/"+id, nil).Status)
		} else {
			require.Equal(t, 200, b.call("POST", "/api/v1/fail/"+id, map[string]any{"error": "x"}).Status)
		}
	}
	one := b.call("GET", "/api/v1/batches?limit=1&cursor="+p1.Body["cursor"].(string), nil)
	v := one.Body["batches"].([]any)[0].(map[string]any)
	require.Equal(t, first, v["id"])
	require.EqualValues(t, 2, v["total"])
	require.EqualValues(t, 0, v["pending"])
	require.EqualValues(t, 1, v["succeeded"])
	require.EqualValues(t, 1, v["failed"])
	require.NotNil(t, v["callback_job_id"])
	require.Equal(t, "pending", v["callback_state"], "the callback job waits in its queue")
	require.NotNil(t, v["created_at"])
	require.NotNil(t, v["completed_at"])
	got := b.call("GET", "/api/v1/batches/"+first, nil).Body
	require.Equal(t, v, got, "the list shows a batch as GET by id does")
	open := b.call("GET", "/api/v1/batches/"+last, nil).Body
	require.Nil(t, open["callback_state"], "not fired yet")
	require.EqualValues(t, 1, open["pending"])

	// Scope: the mixed batch holds a job outside emails.*.
	e := b.withScope("emails.*")
	require.Equal(t, []string{last, first}, batchIDs(t, e.call("GET", "/api/v1/batches", nil)))
	ep := e.call("GET", "/api/v1/batches?limit=1", nil)
	require.Equal(t, []string{last}, batchIDs(t, ep))
	require.Equal(t, []string{first}, batchIDs(t, e.call("GET", "/api/v1/batches?limit=1&cursor="+ep.Body["cursor"].(string), nil)),
		"a page skips what the scope hides")
	require.Empty(t, batchIDs(t, b.withScope("billing").call("GET", "/api/v1/batches", nil)), "every batch has a job or callback outside billing")

	// Tenancy: another namespace lists none of them.
	require.Empty(t, batchIDs(t, b.call("GET", "/api/v1/batches", nil, wire.ShardNamespaceHeader, otherNS)))

	// Bad input: 400 naming the field.
	for q, field := range map[string]string{
		"limit=0": "limit", "limit=201": "limit", "limit=-1": "limit", "limit=x": "limit",
		"cursor=%%%": "cursor", "cursor=YmF0Y2hfeA": "cursor", // "batch_x": not a batch id
	} {
		bad := b.call("GET", "/api/v1/batches?"+q, nil)
		require.Equal(t, 400, bad.Status, q)
		require.Equal(t, field, errField(bad), q)
	}
	require.Len(t, batchIDs(t, b.call("GET", "/api/v1/batches?limit=200", nil)), 3, "the max is allowed")
}

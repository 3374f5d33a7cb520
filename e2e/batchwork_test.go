package e2e

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/tenancy"
)

func TestBatchWorkerCallsThroughGateway(t *testing.T) {
	t.Parallel()
	owner, _ := shared.tenant(t)
	reqs := make([]client.EnqueueRequest, 25)
	for i := range reqs {
		reqs[i] = client.EnqueueRequest{Queue: "bulk", Payload: map[string]int{"i": i}}
	}
	res, err := owner.EnqueueBatch(ctx(t), client.BatchRequest{Jobs: reqs})
	require.NoError(t, err)
	require.Len(t, res.JobIDs, 25)

	w := owner.ForWorker("bw1")
	jobs, err := w.FetchBatch(ctx(t), client.FetchBatchRequest{Queues: []string{"bulk"}, Max: 10, Timeout: time.Second, LeaseDuration: 30 * time.Second})
	require.NoError(t, err)
	require.Len(t, jobs, 10)
	seen := map[string]bool{}
	for i, j := range jobs {
		require.Equal(t, res.JobIDs[i], j.ID, "FIFO within a priority")
		require.Equal(t, 1, j.Attempt)
		require.Equal(t, 30*time.Second, j.LeaseDuration)
		require.False(t, seen[j.ID])
		seen[j.ID] = true
	}
	rest, err := w.FetchBatch(ctx(t), client.FetchBatchRequest{Queues: []string{"bulk"}, Max: 100, Timeout: time.Second})
	require.NoError(t, err)
	require.Len(t, rest, 15)

	items := make([]client.AckItem, 0, 12)
	for _, j := range jobs {
		items = append(items, client.AckItem{JobID: j.ID, Result: map[string]string{"by": "bw1"}})
	}
	items = append(items, client.AckItem{JobID: jobs[0].ID}, client.AckItem{JobID: "job_01HX0000000000000000000000"})
	out, err := w.AckBatch(ctx(t), items)
	require.NoError(t, err)
	require.Len(t, out, 12)
	for i := range 10 {
		require.True(t, out[i].Acked(), "%+v", out[i])
		require.Equal(t, "completed", out[i].Status)
	}
	require.Equal(t, client.CodeLeaseMismatch, out[10].Err.Code, "acked already")
	require.Equal(t, client.CodeNotFound, out[11].Err.Code)
	d, err := owner.GetJob(ctx(t), jobs[3].ID)
	require.NoError(t, err)
	require.Equal(t, "completed", d.State)
	require.JSONEq(t, `{"by":"bw1"}`, string(d.Result))

	// Another worker's batch ack is refused per job.
	out, err = owner.ForWorker("other").AckBatch(ctx(t), []client.AckItem{{JobID: rest[0].ID}})
	require.NoError(t, err)
	require.Equal(t, client.CodeLeaseMismatch, out[0].Err.Code)

	// Nothing left: the long-poll ends with an empty list.
	start := time.Now()
	none, err := w.FetchBatch(ctx(t), client.FetchBatchRequest{Queues: []string{"bulk"}, Timeout: 300 * time.Millisecond})
	require.NoError(t, err)
	require.Empty(t, none)
	require.GreaterOrEqual(t, time.Since(start), 300*time.Millisecond)
}

func TestBatchFetchLongPollWokenThroughGateway(t *testing.T) {
	t.Parallel()
	owner, _ := shared.tenant(t)
	got := make(chan []*client.Job, 1)
	go func() {
		jobs, _ := owner.FetchBatch(ctx(t), client.FetchBatchRequest{Queues: []string{"later"}, Max: 5, Timeout: 10 * time.Second})
		got <- jobs
	}()
	time.Sleep(300 * time.Millisecond) // let the fetch park
	res, err := owner.Enqueue(ctx(t), client.EnqueueRequest{Queue: "later", Payload: 1})
	require.NoError(t, err)
	select {
	case jobs := <-got:
		require.NotEmpty(t, jobs)
		require.Equal(t, res.JobID, jobs[0].ID)
	case <-time.After(8 * time.Second):
		t.Fatal("the parked batch fetch was not woken by the enqueue")
	}
}

func TestBatchWorkErrorsRolesAndTenants(t *testing.T) {
	t.Parallel()
	a, _ := shared.tenant(t)
	_, ctB := shared.tenant(t)
	g := shared.gateway + "/api/v1"

	prod, err := a.CreateKey(ctx(t), clientKey("p", tenancy.RoleProducer))
	require.NoError(t, err)
	r := call(t, "POST", g+"/fetch/batch", prod.Token, map[string]any{"queues": []string{"q"}, "timeout": 0})
	require.Equal(t, 403, r.Status)
	require.Equal(t, "forbidden", r.code())
	r = call(t, "POST", g+"/ack/batch", prod.Token, map[string]any{"acks": []map[string]string{{"job_id": "job_01HX0000000000000000000000"}}})
	require.Equal(t, 403, r.Status)
	r = call(t, "POST", g+"/fetch/batch", "", map[string]any{"queues": []string{"q"}})
	require.Equal(t, 401, r.Status)

	r = call(t, "POST", g+"/fetch/batch", ctB.OwnerKey, map[string]any{"queues": []string{"q"}, "max": 1001})
	require.Equal(t, 400, r.Status)
	require.Equal(t, "max", r.field())
	r = call(t, "POST", g+"/ack/batch", ctB.OwnerKey, map[string]any{"acks": []any{}})
	require.Equal(t, 400, r.Status)
	require.Equal(t, "acks", r.field())

	// Tenant A's leased jobs: B's batch fetch does not see them and B's
	// batch ack gets not_found for each and changes nothing.
	res, err := a.EnqueueBatch(ctx(t), client.BatchRequest{Jobs: []client.EnqueueRequest{{Queue: "secret", Payload: 1}, {Queue: "secret", Payload: 2}, {Queue: "secret", Payload: 3}}})
	require.NoError(t, err)
	r = call(t, "POST", g+"/fetch/batch", ctB.OwnerKey, map[string]any{"queues": []string{"secret"}, "timeout": 0})
	require.Equal(t, 200, r.Status)
	require.Empty(t, r.Body["jobs"], "B's batch fetch must not see A's queue")
	jobs, err := a.FetchBatch(ctx(t), client.FetchBatchRequest{Queues: []string{"secret"}, WorkerID: "wa", Max: 2, Timeout: time.Second})
	require.NoError(t, err)
	require.Len(t, jobs, 2)

	acks := []map[string]any{{"job_id": jobs[0].ID}, {"job_id": jobs[1].ID}, {"job_id": res.JobIDs[2]}}
	r = call(t, "POST", g+"/ack/batch", ctB.OwnerKey, map[string]any{"acks": acks})
	require.Equal(t, 200, r.Status, string(r.Raw))
	results := r.Body["results"].([]any)
	require.Len(t, results, 3)
	for i, x := range results {
		e := x.(map[string]any)["error"].(map[string]any)
		require.Equal(t, "not_found", e["code"], "result %d", i)
		require.NotContains(t, e["message"], "active")
	}
	for i, id := range res.JobIDs {
		d, err := a.GetJob(ctx(t), id)
		require.NoError(t, err)
		want := "active"
		if i == 2 {
			want = "pending"
		}
		require.Equal(t, want, d.State)
	}
}

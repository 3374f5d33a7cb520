package e2e

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/client"
)

// fetchOne leases the next job of queue, failing the test when none comes.
func fetchOne(t *testing.T, c *client.Client, queue string) *client.Job {
	t.Helper()
	j, err := c.Fetch(ctx(t), client.FetchRequest{Queues: []string{queue}, WorkerID: "w1", Timeout: 5 * time.Second})
	require.NoError(t, err)
	require.NotNil(t, j, "a job in %s", queue)
	return j
}

// A batch of 100 with 3 jobs that die yields exactly one callback with the
// right counts and ids.
func TestBatchCallbackThroughTheGateway(t *testing.T) {
	t.Parallel()
	c, _ := shared.tenant(t)
	zero := 0
	req := client.BatchRequest{Batch: &client.BatchOptions{CallbackQueue: "batch.done", CallbackPayload: map[string]string{"campaign": "c1"}}}
	for i := 0; i < 100; i++ {
		req.Jobs = append(req.Jobs, client.EnqueueRequest{Queue: "batch.work", Payload: i, MaxRetries: &zero})
	}
	res, err := c.EnqueueBatch(ctx(t), req)
	require.NoError(t, err)
	require.Len(t, res.JobIDs, 100)
	require.NotEmpty(t, res.BatchID)
	d, err := c.GetJob(ctx(t), res.JobIDs[0])
	require.NoError(t, err)
	require.Equal(t, res.BatchID, d.BatchID)

	var failed []string
	for n := 0; n < 100; {
		jobs, err := c.FetchBatch(ctx(t), client.FetchBatchRequest{Queues: []string{"batch.work"}, WorkerID: "w1", Max: 40, Timeout: 5 * time.Second})
		require.NoError(t, err)
		var acks []client.AckItem
		for _, j := range jobs {
			var i int
			require.NoError(t, json.Unmarshal(j.Payload, &i))
			if i == 7 || i == 50 || i == 93 {
				_, err := c.Fail(ctx(t), j.ID, "boom", "")
				require.NoError(t, err)
				failed = append(failed, j.ID)
			} else {
				acks = append(acks, client.AckItem{JobID: j.ID, Result: i})
			}
		}
		if len(acks) > 0 {
			_, err = c.AckBatch(ctx(t), acks)
			require.NoError(t, err)
		}
		n += len(jobs)
	}
	b, err := c.GetBatch(ctx(t), res.BatchID)
	require.NoError(t, err)
	pending := "pending" // the callback job waits for a worker of batch.done
	require.Equal(t, client.Batch{ID: res.BatchID, Total: 100, Succeeded: 97, Failed: 3, CallbackQueue: "batch.done",
		CallbackJobID: b.CallbackJobID, CallbackState: &pending, CreatedAt: b.CreatedAt, CompletedAt: b.CompletedAt}, *b)
	require.NotNil(t, b.CompletedAt)

	cb := fetchOne(t, c, "batch.done")
	require.NotNil(t, b.CallbackJobID)
	require.Equal(t, *b.CallbackJobID, cb.ID)
	var p struct {
		BatchID         string            `json:"batch_id"`
		Succeeded       int               `json:"succeeded"`
		Failed          int               `json:"failed"`
		SucceededIDs    []string          `json:"succeeded_ids"`
		FailedIDs       []string          `json:"failed_ids"`
		CallbackPayload map[string]string `json:"callback_payload"`
	}
	require.NoError(t, json.Unmarshal(cb.Payload, &p))
	require.Equal(t, res.BatchID, p.BatchID)
	require.Equal(t, 97, p.Succeeded)
	require.Equal(t, 3, p.Failed)
	require.Len(t, p.SucceededIDs, 97)
	require.ElementsMatch(t, failed, p.FailedIDs)
	require.Equal(t, map[string]string{"campaign": "c1"}, p.CallbackPayload)

	// Exactly one: retrying a dead member by hand and completing it fires nothing more.
	_, err = c.RetryJob(ctx(t), failed[0])
	require.NoError(t, err)
	require.NoError(t, c.Ack(ctx(t), fetchOne(t, c, "batch.work").ID, nil))
	none, err := c.Fetch(ctx(t), client.FetchRequest{Queues: []string{"batch.done"}, WorkerID: "w1", Timeout: 300 * time.Millisecond})
	require.NoError(t, err)
	require.Nil(t, none, "a second callback")
}

// A 3-step chain forwards each step's result and runs on_failure when
// step 2 dies.
func TestChainForwardsResultsAndRunsOnFailure(t *testing.T) {
	t.Parallel()
	c, _ := shared.tenant(t)
	zero := 0
	// Steps after the first take their queue's defaults: step 2 dies at its first failure.
	_, err := c.SetQueueDefaults(ctx(t), "chain.summarize", client.QueueDefaults{MaxRetries: &zero})
	require.NoError(t, err)
	res, err := c.Enqueue(ctx(t), client.EnqueueRequest{Queue: "chain.extract", Payload: map[string]string{"doc": "d1"}, MaxRetries: &zero,
		Chain: &client.Chain{
			Steps:     []client.ChainStep{{Queue: "chain.extract"}, {Queue: "chain.summarize", Payload: map[string]int{"words": 100}}, {Queue: "chain.review"}},
			OnFailure: &client.ChainStep{Queue: "chain.failed", Payload: map[string]string{"notify": "ops"}},
		}})
	require.NoError(t, err)
	d, err := c.GetJob(ctx(t), res.JobID)
	require.NoError(t, err)
	require.NotEmpty(t, d.ChainID)
	require.Equal(t, 0, d.ChainStep)

	s1 := fetchOne(t, c, "chain.extract")
	require.NoError(t, c.AckStep(ctx(t), s1.ID, map[string]string{"text": "t1"}, client.StepContinue))
	s2 := fetchOne(t, c, "chain.summarize")
	require.JSONEq(t, `{"previous_result":{"text":"t1"},"payload":{"words":100}}`, string(s2.Payload))
	d2, err := c.GetJob(ctx(t), s2.ID)
	require.NoError(t, err)
	require.Equal(t, d.ChainID, d2.ChainID)
	require.Equal(t, 1, d2.ChainStep)
	out, err := c.Fail(ctx(t), s2.ID, "model timeout", "")
	require.NoError(t, err)
	require.Equal(t, client.StateDead, out.Status)
	h := fetchOne(t, c, "chain.failed")
	var p map[string]any
	require.NoError(t, json.Unmarshal(h.Payload, &p))
	require.Equal(t, d.ChainID, p["chain_id"])
	require.EqualValues(t, 1, p["failed_step"])
	require.Equal(t, s2.ID, p["failed_job_id"])
	require.Equal(t, "model timeout", p["error"])
	require.Equal(t, map[string]any{"notify": "ops"}, p["payload"])
	none, err := c.Fetch(ctx(t), client.FetchRequest{Queues: []string{"chain.review"}, WorkerID: "w1", Timeout: 200 * time.Millisecond})
	require.NoError(t, err)
	require.Nil(t, none, "step 3 never runs")

	// A chain whose step acks with exit runs on_exit.
	_, err = c.Enqueue(ctx(t), client.EnqueueRequest{Queue: "chain2.a", Chain: &client.Chain{
		Steps: []client.ChainStep{{}, {Queue: "chain2.b"}}, OnExit: &client.ChainStep{Queue: "chain2.exit"}}})
	require.NoError(t, err)
	require.NoError(t, c.AckStep(ctx(t), fetchOne(t, c, "chain2.a").ID, "stop", client.StepExit))
	ex := fetchOne(t, c, "chain2.exit")
	require.Contains(t, string(ex.Payload), `"previous_result":"stop"`)
}

// Dependencies hold a job until its dependencies completed; a failed one
// cancels the dependent.
func TestDependenciesThroughTheGateway(t *testing.T) {
	t.Parallel()
	c, _ := shared.tenant(t)
	a, err := c.Enqueue(ctx(t), client.EnqueueRequest{Queue: "deps.a"})
	require.NoError(t, err)
	zero := 0
	b, err := c.Enqueue(ctx(t), client.EnqueueRequest{Queue: "deps.b", MaxRetries: &zero})
	require.NoError(t, err)
	d, err := c.Enqueue(ctx(t), client.EnqueueRequest{Queue: "deps.d", DependsOn: []string{a.JobID}})
	require.NoError(t, err)
	require.Equal(t, client.StateHeld, d.Status)
	x, err := c.Enqueue(ctx(t), client.EnqueueRequest{Queue: "deps.x", DependsOn: []string{a.JobID, b.JobID}})
	require.NoError(t, err)
	r, err := c.Enqueue(ctx(t), client.EnqueueRequest{Queue: "deps.r", DependsOn: []string{b.JobID}, OnDependencyFailure: client.OnDependencyFailureRun})
	require.NoError(t, err)

	require.NoError(t, c.Ack(ctx(t), fetchOne(t, c, "deps.a").ID, nil))
	require.Equal(t, d.JobID, fetchOne(t, c, "deps.d").ID, "released when a completed")
	_, err = c.Fail(ctx(t), fetchOne(t, c, "deps.b").ID, "boom", "")
	require.NoError(t, err)
	xd, err := c.GetJob(ctx(t), x.JobID)
	require.NoError(t, err)
	require.Equal(t, client.StateCancelled, xd.State)
	require.Equal(t, "dependency_failed", xd.CancelReason)
	require.Equal(t, []string{a.JobID, b.JobID}, xd.DependsOn)
	require.Equal(t, r.JobID, fetchOne(t, c, "deps.r").ID, "runs anyway under the run policy")

	// Already completed at enqueue: pending at once.
	now, err := c.Enqueue(ctx(t), client.EnqueueRequest{Queue: "deps.now", DependsOn: []string{a.JobID}})
	require.NoError(t, err)
	require.Equal(t, client.StatePending, now.Status)
}

// Tenant B sees none of tenant A's batches and cannot depend on A's jobs.
func TestFlowsTenantIsolation(t *testing.T) {
	t.Parallel()
	a, _ := shared.tenant(t)
	b, _ := shared.tenant(t)
	res, err := a.EnqueueBatch(ctx(t), client.BatchRequest{Jobs: []client.EnqueueRequest{{Queue: "iso.q"}}, Batch: &client.BatchOptions{CallbackQueue: "iso.done"}})
	require.NoError(t, err)
	_, err = a.GetBatch(ctx(t), res.BatchID)
	require.NoError(t, err)
	_, err = b.GetBatch(ctx(t), res.BatchID)
	require.True(t, client.IsNotFound(err), "%v", err)
	_, err = b.Enqueue(ctx(t), client.EnqueueRequest{Queue: "iso.q", DependsOn: []string{res.JobIDs[0]}})
	require.True(t, client.IsBadRequest(err), "%v", err)
	var ce *client.Error
	require.True(t, errors.As(err, &ce))
	require.Equal(t, "depends_on", ce.Field)
	_, err = a.Enqueue(ctx(t), client.EnqueueRequest{Queue: "iso.q", DependsOn: []string{res.JobIDs[0]}})
	require.NoError(t, err, "A may")
}

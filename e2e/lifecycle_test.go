package e2e

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/client"
)

func TestLifecycleThroughGateway(t *testing.T) {
	t.Parallel()
	c, _ := shared.tenant(t)
	res, err := c.Enqueue(ctx(t), client.EnqueueRequest{Queue: "emails.send", Payload: map[string]string{"to": "a@example.com"}, Tags: map[string]string{"campaign": "x"}})
	require.NoError(t, err)
	require.Equal(t, "pending", res.Status)

	j, err := c.Fetch(ctx(t), client.FetchRequest{Queues: []string{"emails.send"}, WorkerID: "w1", Hostname: "pod-1", Timeout: time.Second, LeaseDuration: 20 * time.Second})
	require.NoError(t, err)
	require.NotNil(t, j)
	require.Equal(t, res.JobID, j.ID)
	require.Equal(t, 1, j.Attempt)
	require.Equal(t, 20*time.Second, j.LeaseDuration)
	require.JSONEq(t, `{"to":"a@example.com"}`, string(j.Payload))

	hb, err := c.Heartbeat(ctx(t), map[string]client.HeartbeatJob{j.ID: {Progress: &client.Progress{Current: 450, Total: 1000, Message: "half"}}})
	require.NoError(t, err)
	require.Equal(t, "ok", hb.Jobs[j.ID].Status)
	d, err := c.GetJob(ctx(t), j.ID)
	require.NoError(t, err)
	require.Equal(t, "active", d.State)
	require.Equal(t, int64(450), d.Progress.Current)
	require.Equal(t, "w1", d.Worker.ID)
	require.Equal(t, "pod-1", d.Worker.Hostname)

	require.NoError(t, c.Ack(ctx(t), j.ID, map[string]bool{"sent": true}))
	d, err = c.GetJob(ctx(t), j.ID)
	require.NoError(t, err)
	require.Equal(t, "completed", d.State)
	require.JSONEq(t, `{"sent":true}`, string(d.Result))
	require.NotNil(t, d.CompletedAt)
}

func TestRetriesToDeadWithBackoff(t *testing.T) {
	t.Parallel()
	c, _ := shared.tenant(t)
	two := 2
	res, err := c.Enqueue(ctx(t), client.EnqueueRequest{Queue: "flaky", MaxRetries: &two, RetryBackoff: client.BackoffLinear, RetryBaseDelay: 300 * time.Millisecond, RetryMaxDelay: time.Minute})
	require.NoError(t, err)
	// The server records the failure between failStart and failedAt.
	var failStart, failedAt time.Time
	for attempt := 1; attempt <= 3; attempt++ {
		j, err := c.Fetch(ctx(t), client.FetchRequest{Queues: []string{"flaky"}, WorkerID: "w", Timeout: 5 * time.Second})
		require.NoError(t, err)
		require.NotNil(t, j, "attempt %d", attempt)
		require.Equal(t, attempt, j.Attempt)
		if attempt > 1 {
			// Linear: attempt n waits base*(n-1) (plus at most 10% jitter) after the failure.
			want := time.Duration(attempt-1) * 300 * time.Millisecond
			require.GreaterOrEqual(t, time.Since(failStart), want, "attempt %d came too early", attempt)
			require.Less(t, time.Since(failedAt), want+want/10+400*time.Millisecond, "attempt %d came too late", attempt)
		}
		failStart = time.Now()
		fr, err := c.Fail(ctx(t), j.ID, "boom", "at worker.go:1")
		failedAt = time.Now()
		require.NoError(t, err)
		if attempt < 3 {
			require.Equal(t, "retrying", fr.Status)
			require.NotNil(t, fr.NextAttemptAt)
		} else {
			require.Equal(t, "dead", fr.Status)
		}
	}
	d, err := c.GetJob(ctx(t), res.JobID)
	require.NoError(t, err)
	require.Equal(t, "dead", d.State)
	require.Len(t, d.Errors, 3)
	for i, e := range d.Errors {
		require.Equal(t, i+1, e.Attempt)
		require.Equal(t, "boom", e.Error)
		require.Equal(t, "at worker.go:1", e.Backtrace)
	}
}

func TestPriorityOrder(t *testing.T) {
	t.Parallel()
	c, _ := shared.tenant(t)
	var ids []string
	for _, p := range []client.Priority{client.PriorityNormal, client.PriorityHigh, client.PriorityCritical, client.PriorityNormal, client.PriorityCritical} {
		r, err := c.Enqueue(ctx(t), client.EnqueueRequest{Queue: "prio", Priority: p})
		require.NoError(t, err)
		ids = append(ids, r.JobID)
	}
	want := []string{ids[2], ids[4], ids[1], ids[0], ids[3]}
	for i, id := range want {
		j, err := c.Fetch(ctx(t), client.FetchRequest{Queues: []string{"prio"}, Timeout: time.Second})
		require.NoError(t, err)
		require.Equal(t, id, j.ID, "fetch %d", i)
	}
}

func TestUniqueAndDelayedJobs(t *testing.T) {
	t.Parallel()
	c, _ := shared.tenant(t)
	req := client.EnqueueRequest{Queue: "sync", UniqueKey: "user-42", UniquePeriod: time.Hour}
	first, err := c.Enqueue(ctx(t), req)
	require.NoError(t, err)
	dup, err := c.Enqueue(ctx(t), req)
	require.NoError(t, err)
	require.True(t, dup.UniqueExisting)
	require.Equal(t, first.JobID, dup.JobID)

	due := time.Now().Add(700 * time.Millisecond)
	r, err := c.Enqueue(ctx(t), client.EnqueueRequest{Queue: "later", ScheduledAt: due})
	require.NoError(t, err)
	require.Equal(t, "scheduled", r.Status)
	j, err := c.Fetch(ctx(t), client.FetchRequest{Queues: []string{"later"}, Timeout: 5 * time.Second})
	require.NoError(t, err)
	require.Equal(t, r.JobID, j.ID)
	require.False(t, time.Now().Before(due.Add(-50*time.Millisecond)), "delayed job delivered early")
}

func TestLeaseExpiryKeepsCheckpoint(t *testing.T) {
	t.Parallel()
	c, _ := shared.tenant(t)
	r, err := c.Enqueue(ctx(t), client.EnqueueRequest{Queue: "long"})
	require.NoError(t, err)
	j, err := c.Fetch(ctx(t), client.FetchRequest{Queues: []string{"long"}, WorkerID: "w1", Timeout: time.Second, LeaseDuration: time.Second})
	require.NoError(t, err)
	_, err = c.Heartbeat(ctx(t), map[string]client.HeartbeatJob{j.ID: {Checkpoint: json.RawMessage(`{"offset":47000}`)}})
	require.NoError(t, err)
	// w1 dies; after its lease runs out the job goes to w2 with the checkpoint.
	j2, err := c.Fetch(ctx(t), client.FetchRequest{Queues: []string{"long"}, WorkerID: "w2", Timeout: 5 * time.Second})
	require.NoError(t, err)
	require.NotNil(t, j2)
	require.Equal(t, r.JobID, j2.ID)
	require.Equal(t, 2, j2.Attempt)
	require.JSONEq(t, `{"offset":47000}`, string(j2.Checkpoint))
	d, err := c.GetJob(ctx(t), r.JobID)
	require.NoError(t, err)
	require.Len(t, d.Errors, 1, "the lost attempt is in the history")
	require.Equal(t, "w2", d.Worker.ID)
}

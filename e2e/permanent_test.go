package e2e

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/client"
)

// A handler's Permanent error, through the Go worker, the gateway and the
// shard: the job is dead after its one attempt although retries remain,
// with dead_reason non_retryable and the error recorded.
func TestWorkerPermanentErrorIsDeadAfterOneAttempt(t *testing.T) {
	t.Parallel()
	c, _ := shared.tenant(t)
	five := 5
	r, err := c.Enqueue(ctx(t), client.EnqueueRequest{Queue: "charges", Payload: map[string]int{"n": 1}, MaxRetries: &five,
		RetryBackoff: client.BackoffNone})
	require.NoError(t, err)
	var runs atomic.Int32
	runCtx, stop := context.WithCancel(context.Background())
	w := client.NewWorker(c, client.WorkerConfig{Queues: []string{"charges"}, WorkerID: "perm-1", FetchTimeout: time.Second},
		func(ctx context.Context, j *client.JobContext) (any, error) {
			runs.Add(1)
			return nil, fmt.Errorf("charge: %w", client.Permanent(errors.New("card declined")))
		})
	done := make(chan error, 1)
	go func() { done <- w.Run(runCtx) }()
	var d *client.JobDetail
	eventually(t, 20*time.Second, func() bool {
		d, err = c.GetJob(ctx(t), r.JobID)
		return err == nil && d.State == "dead"
	}, "the job is dead")
	stop()
	require.NoError(t, <-done)
	require.Equal(t, "non_retryable", d.DeadReason)
	require.Equal(t, 1, d.Attempt)
	require.Len(t, d.Errors, 1)
	require.Equal(t, "charge: card declined", d.Errors[0].Error)
	require.EqualValues(t, 1, runs.Load(), "never run again")
	last := d.Timeline[len(d.Timeline)-1]
	require.Equal(t, "dead", last.Event)
	require.Equal(t, "non_retryable", last.Detail)

	// Client.Fail with NonRetryable says so in its answer.
	r, err = c.Enqueue(ctx(t), client.EnqueueRequest{Queue: "charges2", Payload: 1, MaxRetries: &five})
	require.NoError(t, err)
	j, err := c.Fetch(ctx(t), client.FetchRequest{Queues: []string{"charges2"}, Timeout: time.Second})
	require.NoError(t, err)
	require.Equal(t, r.JobID, j.ID)
	out, err := c.Fail(ctx(t), j.ID, "bad input", "", client.Lease(j.LeaseToken), client.NonRetryable())
	require.NoError(t, err)
	require.Equal(t, "dead", out.Status)
	require.Equal(t, "non_retryable", out.Reason)
}

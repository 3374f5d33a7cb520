package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/client"
)

// A drain through the gateway: the Go worker finishes the job it holds,
// fetches nothing more, and Run returns nil by itself; the worker list
// shows it draining.
func TestWorkerDrainEndsRunAfterHeldJob(t *testing.T) {
	t.Parallel()
	c, _ := shared.tenant(t)
	held, err := c.Enqueue(ctx(t), client.EnqueueRequest{Queue: "drain", Payload: 1})
	require.NoError(t, err)
	started, release := make(chan string, 4), make(chan struct{})
	w := client.NewWorker(c, client.WorkerConfig{Queues: []string{"drain"}, WorkerID: "drain-1", Concurrency: 2,
		FetchTimeout: 5 * time.Second, ShutdownGrace: time.Minute},
		func(ctx context.Context, j *client.JobContext) (any, error) {
			started <- j.ID
			<-release
			return "done", nil
		})
	done := make(chan error, 1)
	go func() { done <- w.Run(context.Background()) }()
	select {
	case id := <-started:
		require.Equal(t, held.JobID, id)
	case <-time.After(20 * time.Second):
		t.Fatal("the held job never started")
	}

	dr, err := c.DrainWorker(ctx(t), "drain-1")
	require.NoError(t, err)
	require.True(t, dr.Draining)
	workers, err := c.ListWorkers(ctx(t))
	require.NoError(t, err)
	require.Len(t, workers, 1)
	require.True(t, workers[0].Draining)
	next, err := c.Enqueue(ctx(t), client.EnqueueRequest{Queue: "drain", Payload: 2})
	require.NoError(t, err)
	close(release)

	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return after the drain")
	}
	d, err := c.GetJob(ctx(t), held.JobID)
	require.NoError(t, err)
	require.Equal(t, "completed", d.State)
	d, err = c.GetJob(ctx(t), next.JobID)
	require.NoError(t, err)
	require.Equal(t, "pending", d.State, "nothing else fetched")
	require.Zero(t, d.Attempt)
	require.Empty(t, started)

	var apiErr *client.Error
	_, err = c.DrainWorker(ctx(t), "never-seen")
	require.ErrorAs(t, err, &apiErr)
	require.Equal(t, 404, apiErr.Status)
}

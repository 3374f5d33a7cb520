package e2e

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/client"
)

// The Go worker runtime against the real server: jobs that succeed, jobs
// that fail once and then succeed on retry, progress reported along the
// way, and a clean shutdown.
func TestWorkerRuntimeProcessesJobs(t *testing.T) {
	t.Parallel()
	c, _ := shared.tenant(t)
	zero := 0
	var ids []string
	for i := 0; i < 20; i++ {
		req := client.EnqueueRequest{Queue: "work", Payload: map[string]int{"n": i}, RetryBackoff: client.BackoffNone}
		if i%2 == 0 {
			req.MaxRetries = &zero // even jobs must succeed first time
		}
		r, err := c.Enqueue(ctx(t), req)
		require.NoError(t, err)
		ids = append(ids, r.JobID)
	}
	var mu sync.Mutex
	attempts := map[string]int{}
	ctxRun, stop := context.WithCancel(context.Background())
	w := client.NewWorker(c, client.WorkerConfig{Queues: []string{"work"}, Concurrency: 4, WorkerID: "rt-1", FetchTimeout: time.Second},
		func(ctx context.Context, j *client.JobContext) (any, error) {
			var p struct{ N int }
			if err := j.Decode(&p); err != nil {
				return nil, err
			}
			j.Progress(1, 2, "halfway")
			mu.Lock()
			attempts[j.ID]++
			mu.Unlock()
			if p.N%2 == 1 && j.Attempt == 1 {
				return nil, errors.New("transient")
			}
			return map[string]int{"doubled": p.N * 2}, nil
		})
	done := make(chan error, 1)
	go func() { done <- w.Run(ctxRun) }()
	eventually(t, 20*time.Second, func() bool {
		for _, id := range ids {
			d, err := c.GetJob(ctx(t), id)
			if err != nil || d.State != "completed" {
				return false
			}
		}
		return true
	}, "all jobs completed")
	stop()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("worker did not stop")
	}
	for i, id := range ids {
		d, err := c.GetJob(ctx(t), id)
		require.NoError(t, err)
		require.JSONEq(t, `{"doubled":`+strconv.Itoa(i*2)+`}`, string(d.Result))
		want := 1
		if i%2 == 1 {
			want = 2
			require.Len(t, d.Errors, 1)
			require.Equal(t, "transient", d.Errors[0].Error)
		}
		require.Equal(t, want, attempts[id], "job %d", i)
		require.Equal(t, "rt-1", d.Worker.ID)
	}
}

package e2e

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/e2e/internal/freeport"
)

// A worker on the stream (WorkerService.Work through the gateway's gRPC
// port) works through a kill of its shard's leader (3 nodes): every job
// completes, no lease is handed to it twice, it never runs more jobs
// than the credit it grants, and the jobs of another namespace of the
// same tenant, in a queue of the same name, never reach it.
func TestStreamWorkerRidesALeaderKill(t *testing.T) {
	ports, err := freeport.Loopback(1)
	require.NoError(t, err)
	c := launchCluster(t, 1, 3, "--grpc-addr", ports[0])
	if _, ok := c.leader("s1", 0, 30*time.Second); !ok {
		t.Fatal("no leader")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	owner := client.New(c.gateway, c.ownerKey)
	_, err = owner.CreateNamespace(ctx, "other")
	require.NoError(t, err)
	other := client.New(c.gateway, c.ownerKey, client.WithNamespace("other"))

	enqueue := func(cl *client.Client, n int, tag string) []string {
		reqs := make([]client.EnqueueRequest, n)
		for i := range reqs {
			reqs[i] = client.EnqueueRequest{Queue: "streamed", Payload: map[string]any{"tag": tag, "i": i}}
		}
		var res *client.BatchResult
		eventually(t, 30*time.Second, func() bool {
			res, err = cl.EnqueueBatch(ctx, client.BatchRequest{Jobs: reqs})
			return err == nil
		}, "an enqueue answered")
		return res.JobIDs
	}
	foreign := map[string]bool{}
	for _, id := range enqueue(other, 50, "other") {
		foreign[id] = true
	}
	mine := enqueue(owner, 400, "before")

	const credit = 8
	var (
		mu       sync.Mutex
		attempts = map[string]int{} // job and attempt → deliveries
		strays   []string
		running  atomic.Int64
		most     atomic.Int64
		handled  atomic.Int64
	)
	w := client.NewWorker(owner, client.WorkerConfig{Queues: []string{"streamed"}, Concurrency: credit, WorkerID: "stream-1",
		LeaseDuration: 5 * time.Second, Transport: client.TransportStream, StreamURL: "http://" + ports[0]},
		func(ctx context.Context, j *client.JobContext) (any, error) {
			n := running.Add(1)
			defer running.Add(-1)
			for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
			}
			mu.Lock()
			attempts[fmt.Sprint(j.ID, "#", j.Attempt)]++
			if foreign[j.ID] {
				strays = append(strays, j.ID)
			}
			mu.Unlock()
			handled.Add(1)
			time.Sleep(10 * time.Millisecond) // jobs are running when the leader dies
			return nil, nil
		})
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- w.Run(runCtx) }()
	defer func() {
		stop()
		require.NoError(t, <-done)
	}()

	eventually(t, time.Minute, func() bool { return handled.Load() >= 100 }, "the worker works")
	l, ok := c.leader("s1", 0, 20*time.Second)
	require.True(t, ok)
	require.NoError(t, syscall.Kill(l.PID, syscall.SIGKILL))
	n, ok := c.leader("s1", l.PID, 30*time.Second)
	require.True(t, ok, "a new leader after killing %s", l.NodeID)
	t.Logf("killed leader %s with %d jobs handled; %s leads", l.NodeID, handled.Load(), n.NodeID)
	mine = append(mine, enqueue(owner, 100, "after")...)

	pending := func(cl *client.Client) int64 {
		p, err := cl.Search(ctx, client.SearchRequest{SearchFilter: client.SearchFilter{Queue: "streamed",
			State: []string{"pending", "active", "retrying", "scheduled"}}, Limit: 1})
		if err != nil {
			return -1
		}
		return p.Total
	}
	eventually(t, 2*time.Minute, func() bool { return pending(owner) == 0 }, "every job of the namespace completes")
	for _, id := range mine {
		var j *client.JobDetail
		eventually(t, 30*time.Second, func() bool {
			j, err = owner.GetJob(ctx, id)
			return err == nil || errors.Is(err, context.Canceled)
		}, "the job is read")
		require.Equal(t, "completed", j.State, "job %s", id)
	}
	mu.Lock()
	defer mu.Unlock()
	for k, v := range attempts {
		require.Equal(t, 1, v, "attempt %s delivered %d times", k, v)
	}
	require.Empty(t, strays, "another namespace's jobs reached the worker")
	require.LessOrEqual(t, most.Load(), int64(credit), "more jobs at once than the credit granted")
	require.Equal(t, int64(50), pending(other), "the other namespace's jobs are all still waiting")
}

package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/client"
	jobbiev1 "github.com/jobbie/jobbie/proto/gen/jobbie/v1"
	"github.com/jobbie/jobbie/wire"
)

// eventually polls cond until it holds, at most a minute.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within a minute", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// counts is how often a handler ran each job.
type counts struct {
	mu   sync.Mutex
	runs map[string]int
	all  chan string
}

func newCounts() *counts { return &counts{runs: map[string]int{}, all: make(chan string, 10_000)} }

func (c *counts) ran(id string) {
	c.mu.Lock()
	c.runs[id]++
	c.mu.Unlock()
	c.all <- id
}

// The Go SDK's worker over the stream against jobbie dev: 200 jobs
// complete, each once; a job whose handler returns a client.Permanent
// error dies at its first attempt (non_retryable, as over HTTP) with
// retries left; a running job's progress reaches GET job through the
// stream's heartbeats; a cancel reaches its handler's context; the
// worker shuts down gracefully when its context ends.
func TestStreamWorkerAgainstDev(t *testing.T) {
	t.Parallel()
	d := startDevIn(t, t.TempDir(), "--grpc-addr", "127.0.0.1:0")
	ctx := context.Background()
	key := readKey(t, filepath.Join(d.dir, "owner.key"))
	api := client.New(d.gateway, key)
	const n = 200
	for range n / 100 {
		jobs := make([]client.EnqueueRequest, 100)
		for i := range jobs {
			jobs[i] = client.EnqueueRequest{Queue: "sdk"}
		}
		_, err := api.EnqueueBatch(ctx, client.BatchRequest{Jobs: jobs})
		require.NoError(t, err)
	}
	slow, err := api.Enqueue(ctx, client.EnqueueRequest{Queue: "slow"})
	require.NoError(t, err)
	doomed, err := api.Enqueue(ctx, client.EnqueueRequest{Queue: "doomed", MaxRetries: new(5)})
	require.NoError(t, err)
	var doomedRuns atomic.Int64

	c := newCounts()
	cause := make(chan error, 1)
	w := client.NewWorker(api, client.WorkerConfig{Queues: []string{"sdk", "slow", "doomed"}, Concurrency: 8, HeartbeatInterval: 100 * time.Millisecond,
		Transport: client.TransportStream, StreamURL: d.grpc},
		func(ctx context.Context, job *client.JobContext) (any, error) {
			if job.Queue == "doomed" {
				doomedRuns.Add(1)
				return nil, client.Permanent(errors.New("no such account"))
			}
			if job.Queue == "slow" {
				job.Progress(3, 10, "a third")
				<-ctx.Done()
				cause <- context.Cause(ctx)
				return nil, ctx.Err()
			}
			c.ran(job.ID)
			return map[string]string{"done": job.ID}, nil
		})
	runCtx, stop := context.WithCancel(ctx)
	ran := make(chan error, 1)
	go func() { ran <- w.Run(runCtx) }()

	for range n {
		select {
		case <-c.all:
		case err := <-ran:
			t.Fatalf("the worker stopped: %v", err)
		case <-time.After(time.Minute):
			t.Fatal("not every job ran within a minute")
		}
	}
	eventually(t, "every job completed", func() bool {
		q, err := api.GetQueue(ctx, "sdk")
		return err == nil && q.Counts.Completed == n
	})
	c.mu.Lock()
	require.Len(t, c.runs, n)
	for id, runs := range c.runs {
		require.Equal(t, 1, runs, "job %s ran more than once", id)
	}
	c.mu.Unlock()

	eventually(t, "the permanent failure dead at its first attempt", func() bool {
		j, err := api.GetJob(ctx, doomed.JobID)
		return err == nil && j.State == wire.StateDead
	})
	dj, err := api.GetJob(ctx, doomed.JobID)
	require.NoError(t, err)
	require.Equal(t, "non_retryable", dj.DeadReason)
	require.Equal(t, 1, dj.Attempt)
	require.Equal(t, int64(1), doomedRuns.Load())

	eventually(t, "the slow job's progress", func() bool {
		j, err := api.GetJob(ctx, slow.JobID)
		return err == nil && j.Progress != nil && j.Progress.Current == 3 && j.Progress.Total == 10
	})
	_, err = api.CancelJob(ctx, slow.JobID)
	require.NoError(t, err)
	select {
	case err := <-cause:
		require.ErrorIs(t, err, client.ErrJobCancelled)
	case <-time.After(time.Minute):
		t.Fatal("the cancel did not reach the handler")
	}
	eventually(t, "the slow job cancelled", func() bool {
		j, err := api.GetJob(ctx, slow.JobID)
		return err == nil && j.State == wire.StateCancelled
	})
	stop()
	require.NoError(t, <-ran)
}

// A stream that breaks mid-job loses no job: its lease runs out and the
// job is delivered again, as its next attempt, on another stream.
func TestWorkerStreamLostMidJobAgainstDev(t *testing.T) {
	t.Parallel()
	d := startDevIn(t, t.TempDir(), "--grpc-addr", "127.0.0.1:0")
	ctx := context.Background()
	key := readKey(t, filepath.Join(d.dir, "owner.key"))
	api := client.New(d.gateway, key)
	job, err := api.Enqueue(ctx, client.EnqueueRequest{Queue: "lost"})
	require.NoError(t, err)

	hc := h2c(t)
	first := openStream(t, hc, d.grpc, key, &jobbiev1.WorkRequest{Hello: hello("w-lost", "1s", "lost"), Credit: &jobbiev1.Credit{N: 1}})
	require.Equal(t, job.JobID, first.waitJobs(t, 1)[0].GetJobId())
	first.drop() // the worker vanishes: no clean close
	require.Error(t, first.waitEnd(t))

	second := openStream(t, hc, d.grpc, key, &jobbiev1.WorkRequest{Hello: hello("w-next", "", "lost"), Credit: &jobbiev1.Credit{N: 1}})
	again := second.waitJobs(t, 1)[0]
	require.Equal(t, job.JobID, again.GetJobId())
	require.EqualValues(t, 2, again.GetAttempt(), "the lost lease used its attempt")
	second.send(t, &jobbiev1.WorkRequest{Acks: []*jobbiev1.Ack{{CorrelationId: 1, JobId: again.GetJobId(), LeaseToken: again.GetLeaseToken()}}})
	require.Equal(t, wire.StateCompleted, second.waitResults(t, 1)[1].GetStatus())
}

// freeAddr is a loopback address no one listens on.
//
// The port is below the kernel's ephemeral range (Linux's default starts
// at 32768; other systems' start higher): a port from that range, free
// when picked, may be any outgoing connection's by the time the address is
// bound again, and a restart then fails with "bind: address already in
// use" (seen on a loaded machine running every package's tests at once).
// Outside it, only a listener that asks for the port can take it.
func freeAddr(t *testing.T) string {
	t.Helper()
	for range 100 {
		addr := fmt.Sprintf("127.0.0.1:%d", 10000+rand.IntN(32768-10000))
		if ln, err := net.Listen("tcp", addr); err == nil {
			require.NoError(t, ln.Close())
			return addr
		}
	}
	t.Fatal("no free port below the ephemeral range")
	return ""
}

// A gateway that stops sends Drain: the SDK worker finishes its running
// job and acks it on the draining stream, then reconnects (with
// backoff, while the gateway is down) to the restarted one and carries
// on. No job is lost or run twice.
func TestStreamWorkerDrainAcrossRestartAgainstDev(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	grpcAddr := freeAddr(t)
	d, stopDev := runDev(t, dir, "--grpc-addr", grpcAddr)
	ctx := context.Background()
	key := readKey(t, filepath.Join(d.dir, "owner.key"))
	api := client.New(d.gateway, key)
	held, err := api.Enqueue(ctx, client.EnqueueRequest{Queue: "drain", Payload: map[string]bool{"hold": true}})
	require.NoError(t, err)

	c := newCounts()
	started := make(chan struct{})
	release := make(chan struct{})
	w := client.NewWorker(client.New(d.gateway, key), client.WorkerConfig{Queues: []string{"drain"}, Concurrency: 4,
		Transport: client.TransportStream, StreamURL: d.grpc},
		func(ctx context.Context, job *client.JobContext) (any, error) {
			var p struct{ Hold bool }
			_ = json.Unmarshal(job.Payload, &p)
			if p.Hold {
				close(started)
				<-release
			}
			c.ran(job.ID)
			return nil, nil
		})
	runCtx, stop := context.WithCancel(ctx)
	ran := make(chan error, 1)
	go func() { ran <- w.Run(runCtx) }()
	<-started
	// A second worker, frame by frame, to see the Drain frame itself.
	raw := openStream(t, h2c(t), d.grpc, key, &jobbiev1.WorkRequest{Hello: hello("w-raw", "", "elsewhere"), Credit: &jobbiev1.Credit{N: 1}})
	// Stop only once the gateway serves it (its fetch made it a worker):
	// a stream that reaches a stopping gateway is refused, not drained.
	eventually(t, "the raw stream is served", func() bool {
		ws, err := api.ListWorkers(ctx)
		require.NoError(t, err)
		for _, w := range ws {
			if w.ID == "w-raw" {
				return true
			}
		}
		return false
	})

	stopped := make(chan error, 1)
	go func() { stopped <- stopDev() }()
	// The gateway drains its streams before it stops listening: once the
	// port refuses, Drain was sent. Then the held job finishes.
	eventually(t, "the gRPC port closed", func() bool {
		conn, err := net.DialTimeout("tcp", grpcAddr, time.Second)
		if err == nil {
			_ = conn.Close()
		}
		return err != nil
	})
	raw.until(t, "drain", func() bool { return raw.drained })
	raw.closeSend(t)
	require.NoError(t, raw.waitEnd(t))
	close(release)
	require.NoError(t, <-stopped)
	require.Equal(t, held.JobID, <-c.all)

	d2, stop2 := runDev(t, dir, "--grpc-addr", grpcAddr)
	defer func() { require.NoError(t, stop2()) }()
	api2 := client.New(d2.gateway, key)
	got, err := api2.GetJob(ctx, held.JobID)
	require.NoError(t, err)
	require.Equal(t, wire.StateCompleted, got.State, "acked on the draining stream")
	next, err := api2.Enqueue(ctx, client.EnqueueRequest{Queue: "drain"})
	require.NoError(t, err)
	select {
	case id := <-c.all:
		require.Equal(t, next.JobID, id, "the worker reconnected")
	case err := <-ran:
		t.Fatalf("the worker stopped: %v", err)
	case <-time.After(time.Minute):
		t.Fatal("the worker did not reconnect within a minute")
	}
	stop()
	require.NoError(t, <-ran)
	c.mu.Lock()
	defer c.mu.Unlock()
	require.Equal(t, map[string]int{held.JobID: 1, next.JobID: 1}, c.runs)
}

// jobbie bench --transport stream against jobbie dev: its workers
// complete every job over worker streams, without an error.
func TestBenchStreamAgainstDev(t *testing.T) {
	t.Parallel()
	d := startDevIn(t, t.TempDir(), "--grpc-addr", "127.0.0.1:0")
	out, _, err := runJobbie(t, "", "bench", "--url", d.gateway, "--key-file", filepath.Join(d.dir, "owner.key"),
		"--transport", "stream", "--grpc-url", d.grpc, "--jobs", "500", "--batch", "100", "--fetch-batch", "50",
		"--producers", "1", "--workers", "2", "-o", "json")
	require.NoError(t, err)
	var rep struct {
		Acked  int64
		Errors map[string]int64
	}
	require.NoError(t, json.Unmarshal([]byte(out), &rep), out)
	require.GreaterOrEqual(t, rep.Acked, int64(500))
	require.Empty(t, rep.Errors)
}

// A worker drained through the API while on the stream (its default when
// the gateway serves one) finishes the job it holds, takes nothing more,
// and Run returns nil by itself, as over HTTP; started again under the
// same id while the drain lasts, Run returns at once.
func TestStreamWorkerDrainedThroughTheAPIAgainstDev(t *testing.T) {
	t.Parallel()
	d := startDevIn(t, t.TempDir(), "--grpc-addr", "127.0.0.1:0")
	ctx := context.Background()
	key := readKey(t, filepath.Join(d.dir, "owner.key"))
	api := client.New(d.gateway, key)
	held, err := api.Enqueue(ctx, client.EnqueueRequest{Queue: "sdrain", Payload: 1})
	require.NoError(t, err)
	started, release := make(chan string, 4), make(chan struct{})
	cfg := client.WorkerConfig{Queues: []string{"sdrain"}, WorkerID: "sdrain-1", Concurrency: 2, ShutdownGrace: time.Minute}
	w := client.NewWorker(client.New(d.gateway, key), cfg, func(ctx context.Context, j *client.JobContext) (any, error) {
		started <- j.ID
		<-release
		return "done", nil
	})
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	require.Equal(t, held.JobID, <-started)
	require.Equal(t, client.TransportStream, w.Transport(), "the default is the stream when the gateway serves one")

	dr, err := api.DrainWorker(ctx, "sdrain-1")
	require.NoError(t, err)
	require.True(t, dr.Draining)
	next, err := api.Enqueue(ctx, client.EnqueueRequest{Queue: "sdrain", Payload: 2})
	require.NoError(t, err)
	close(release)
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(time.Minute):
		t.Fatal("Run did not return after the drain")
	}
	got, err := api.GetJob(ctx, held.JobID)
	require.NoError(t, err)
	require.Equal(t, wire.StateCompleted, got.State)
	got, err = api.GetJob(ctx, next.JobID)
	require.NoError(t, err)
	require.Equal(t, wire.StatePending, got.State, "nothing else was taken")

	again := client.NewWorker(client.New(d.gateway, key), cfg, func(context.Context, *client.JobContext) (any, error) {
		t.Error("a drained worker ran a job")
		return nil, nil
	})
	againDone := make(chan error, 1)
	go func() { againDone <- again.Run(ctx) }()
	select {
	case err := <-againDone:
		require.NoError(t, err)
	case <-time.After(time.Minute):
		t.Fatal("a drained worker's new Run did not return")
	}
}

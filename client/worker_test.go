package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/jobbie/jobbie/client"
	"github.com/stretchr/testify/require"
)

// workerBundle is a fake server and a worker running against it.
type workerBundle struct {
	fake   *fakeServer
	cancel context.CancelFunc
	exited chan struct{} // closed when Run returned
	err    error         // Run's result, once exited
}

// startWorker runs a worker with cfg (queue "q", short fetch timeout, no
// heartbeats unless cfg asks) against a fresh fake server.
func startWorker(t *testing.T, cfg client.WorkerConfig, h client.Handler) *workerBundle {
	t.Helper()
	f := newFakeServer(t)
	cfg.Queues = []string{"q"}
	if cfg.FetchTimeout == 0 {
		cfg.FetchTimeout = 50 * time.Millisecond
	}
	if cfg.HeartbeatInterval == 0 {
		cfg.HeartbeatInterval = time.Hour
	}
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	w := client.NewWorker(f.client(t), cfg, h)
	ctx, cancel := context.WithCancel(context.Background())
	b := &workerBundle{fake: f, cancel: cancel, exited: make(chan struct{})}
	go func() {
		defer close(b.exited)
		b.err = w.Run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-b.exited
	})
	return b
}

// stop cancels the worker and returns Run's result.
func (b *workerBundle) stop(t *testing.T) error {
	b.cancel()
	recv(t, b.exited)
	return b.err
}

func TestWorkerAcksResults(t *testing.T) {
	t.Parallel()
	b := startWorker(t, client.WorkerConfig{Concurrency: 4}, func(_ context.Context, job *client.JobContext) (any, error) {
		var in struct{ N int }
		if err := job.Decode(&in); err != nil {
			return nil, err
		}
		return map[string]int{"double": in.N * 2}, nil
	})
	const n = 20
	for i := range n {
		b.fake.add(fmt.Sprintf("job_%d", i), fmt.Sprintf(`{"n":%d}`, i))
	}
	got := map[string]string{}
	for range n {
		a := recv(t, b.fake.acks)
		got[a.ID] = string(a.Result)
	}
	for i := range n {
		require.JSONEq(t, fmt.Sprintf(`{"double":%d}`, 2*i), got[fmt.Sprintf("job_%d", i)])
	}
	require.NoError(t, b.stop(t))
	require.Empty(t, b.fake.fails)
}

func TestWorkerFailsErrorsAndPanics(t *testing.T) {
	t.Parallel()
	b := startWorker(t, client.WorkerConfig{Concurrency: 2}, func(_ context.Context, job *client.JobContext) (any, error) {
		switch job.ID {
		case "job_panic":
			panic("kaboom")
		case "job_permanent":
			return nil, fmt.Errorf("charge: %w", client.Permanent(errors.New("card declined")))
		}
		return nil, errors.New("SMTP timeout")
	})
	b.fake.add("job_err", `{}`)
	b.fake.add("job_panic", `{}`)
	b.fake.add("job_permanent", `{}`)
	fails := map[string]failCall{}
	for range 3 {
		f := recv(t, b.fake.fails)
		fails[f.ID] = f
	}
	require.Equal(t, "SMTP timeout", fails["job_err"].Error)
	require.Empty(t, fails["job_err"].Backtrace)
	require.Equal(t, "panic: kaboom", fails["job_panic"].Error)
	require.Contains(t, fails["job_panic"].Backtrace, "worker_test.go")
	require.False(t, fails["job_err"].NonRetryable)
	require.False(t, fails["job_panic"].NonRetryable)
	require.Equal(t, "charge: card declined", fails["job_permanent"].Error)
	require.True(t, fails["job_permanent"].NonRetryable, "a wrapped Permanent error is found")
	require.NoError(t, b.stop(t))
	require.Empty(t, b.fake.acks)
}

// stopSeen is what a handler observed when its job was stopped.
type stopSeen struct {
	cause, err error
	cancelled  bool
}

func TestWorkerHeartbeatStopsJob(t *testing.T) {
	t.Parallel()
	for status, want := range map[string]error{"cancel": client.ErrJobCancelled, "lost": client.ErrLeaseLost} {
		t.Run(status, func(t *testing.T) {
			t.Parallel()
			seen := make(chan stopSeen, 1)
			b := startWorker(t, client.WorkerConfig{Concurrency: 1, HeartbeatInterval: 10 * time.Millisecond},
				func(ctx context.Context, job *client.JobContext) (any, error) {
					if job.ID != "job_long" {
						return "ok", nil
					}
					job.Progress(450, 1000, "sending")
					<-ctx.Done()
					seen <- stopSeen{cause: context.Cause(ctx), err: job.Err(), cancelled: job.Cancelled()}
					return nil, ctx.Err()
				})
			b.fake.add("job_long", `{}`)

			// Progress is delivered once, then heartbeats only extend the lease.
			for hb := recv(t, b.fake.heartbeats); hb["job_long"].Progress == nil; hb = recv(t, b.fake.heartbeats) {
			}
			hb := recv(t, b.fake.heartbeats)
			require.Contains(t, hb, "job_long")
			require.Nil(t, hb["job_long"].Progress)

			b.fake.stop("job_long", status)
			require.Equal(t, stopSeen{cause: want, err: want, cancelled: true}, recv(t, seen))

			// A cancelled job is failed, which settles it as cancelled at
			// once; a lost one is not the worker's to report.
			if status == "cancel" {
				f := recv(t, b.fake.fails)
				require.Equal(t, "job_long", f.ID)
				require.Contains(t, f.Error, client.ErrJobCancelled.Error())
			}
			// The single fetch loop moves on.
			b.fake.add("job_next", `{}`)
			require.Equal(t, "job_next", recv(t, b.fake.acks).ID)
			require.NoError(t, b.stop(t))
			require.Empty(t, b.fake.fails)
			require.Empty(t, b.fake.acks)
		})
	}
}

func TestWorkerCheckpoint(t *testing.T) {
	t.Parallel()
	b := startWorker(t, client.WorkerConfig{Concurrency: 1}, func(_ context.Context, job *client.JobContext) (any, error) {
		var cp struct{ Offset int }
		if err := json.Unmarshal(job.LastCheckpoint, &cp); err != nil {
			return nil, err
		}
		job.Progress(1, 2, "half")
		if err := job.Checkpoint(map[string]int{"offset": cp.Offset + 10}); err != nil {
			return nil, err
		}
		return cp.Offset, nil
	})
	b.fake.pending <- fakeJob{ID: "job_1", Payload: json.RawMessage(`{}`), Checkpoint: json.RawMessage(`{"offset":5}`)}

	hb := recv(t, b.fake.heartbeats)
	require.JSONEq(t, `{"offset":15}`, string(hb["job_1"].Checkpoint))
	require.JSONEq(t, `{"current":1,"total":2,"message":"half"}`, string(hb["job_1"].Progress))
	require.JSONEq(t, `5`, string(recv(t, b.fake.acks).Result))
	require.NoError(t, b.stop(t))
}

func TestWorkerShutdownWaitsForRunningJobs(t *testing.T) {
	t.Parallel()
	started := make(chan struct{})
	seen := make(chan stopSeen, 1)
	b := startWorker(t, client.WorkerConfig{Concurrency: 2, ShutdownGrace: time.Minute},
		func(ctx context.Context, job *client.JobContext) (any, error) {
			close(started)
			for !job.Cancelled() { // a long job checks between steps
				time.Sleep(time.Millisecond)
			}
			seen <- stopSeen{cause: ctx.Err(), err: job.Err(), cancelled: true}
			return map[string]bool{"partial": true}, nil
		})
	b.fake.add("job_1", `{}`)
	recv(t, started)
	require.NoError(t, b.stop(t))
	// The handler saw the shutdown while its context was still live.
	require.Equal(t, stopSeen{err: client.ErrWorkerShutdown, cancelled: true}, recv(t, seen))
	require.JSONEq(t, `{"partial":true}`, string(recv(t, b.fake.acks).Result))
	require.Empty(t, b.fake.fails)
}

func TestWorkerShutdownFailsJobsAfterGrace(t *testing.T) {
	t.Parallel()
	started := make(chan struct{})
	causes := make(chan error, 1)
	b := startWorker(t, client.WorkerConfig{Concurrency: 1, ShutdownGrace: 20 * time.Millisecond},
		func(ctx context.Context, job *client.JobContext) (any, error) {
			close(started)
			<-ctx.Done()
			causes <- context.Cause(ctx)
			return "too late", nil
		})
	b.fake.add("job_1", `{}`)
	recv(t, started)
	require.NoError(t, b.stop(t))
	require.Equal(t, failCall{ID: "job_1", Error: "worker_shutdown", LeaseToken: fakeLeaseToken("job_1")}, recv(t, b.fake.fails))
	require.Equal(t, client.ErrWorkerShutdown, recv(t, causes))
	require.Empty(t, b.fake.acks)
}

func TestWorkerStopsWhenRefused(t *testing.T) {
	t.Parallel()
	f := newFakeServer(t)
	f.refuseFetch(http.StatusUnauthorized)
	w := client.NewWorker(f.client(t), client.WorkerConfig{
		Queues: []string{"q"}, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	}, func(context.Context, *client.JobContext) (any, error) { return nil, nil })
	err := w.Run(context.Background())
	require.True(t, client.IsUnauthenticated(err), "got %v", err)
	require.Error(t, w.Run(context.Background()), "Run may be called once")
}

func TestWorkerConfigValidate(t *testing.T) {
	t.Parallel()
	require.Error(t, client.WorkerConfig{}.WithDefaults().Validate())
	cfg := client.WorkerConfig{Queues: []string{"q"}}.WithDefaults()
	require.NoError(t, cfg.Validate())
	require.Equal(t, 10, cfg.Concurrency)
	require.NotEmpty(t, cfg.WorkerID)
	require.Equal(t, 15*time.Second, cfg.HeartbeatInterval)

	short := client.WorkerConfig{Queues: []string{"q"}, LeaseDuration: 9 * time.Second}.WithDefaults()
	require.Equal(t, 3*time.Second, short.HeartbeatInterval)
	bad := client.WorkerConfig{Queues: []string{"q"}, LeaseDuration: 9 * time.Second, HeartbeatInterval: 10 * time.Second}
	require.Error(t, bad.WithDefaults().Validate())
}

// A job whose lease is shorter than three heartbeat intervals (its own or
// its queue's, when the worker asks for none) is heartbeated in time: a
// lease that runs out would use up one of its attempts.
func TestWorkerHeartbeatsWithinAShortLease(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	b := startWorker(t, client.WorkerConfig{}, func(ctx context.Context, _ *client.JobContext) (any, error) {
		<-release
		return nil, nil
	})
	b.fake.pending <- fakeJob{ID: "job_short", Payload: json.RawMessage(`{}`), Lease: 0.6}
	for range 2 {
		hb := recv(t, b.fake.heartbeats) // the interval is an hour: only the lease can bring these
		require.Contains(t, hb, "job_short")
	}
	close(release)
	require.Equal(t, "job_short", recv(t, b.fake.acks).ID)
}

// The worker runtime reports under the lease it was handed: every
// heartbeat, checkpoint, ack and fail carries the job's lease token.
func TestWorkerSendsTheLeaseToken(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	b := startWorker(t, client.WorkerConfig{Concurrency: 1, HeartbeatInterval: 10 * time.Millisecond},
		func(ctx context.Context, job *client.JobContext) (any, error) {
			if job.LeaseToken != fakeLeaseToken(job.ID) {
				return nil, fmt.Errorf("the job context holds lease token %q", job.LeaseToken)
			}
			if job.ID == "job_fail" {
				return nil, errors.New("boom")
			}
			if err := job.Checkpoint(map[string]int{"offset": 1}); err != nil {
				return nil, err
			}
			select {
			case <-release:
			case <-ctx.Done():
			}
			return "done", nil
		})
	var once sync.Once
	done := func() { once.Do(func() { close(release) }) }
	t.Cleanup(done) // before the worker's own cleanup: a failure must not leave the handler waiting
	b.fake.add("job_ok", `{}`)
	for range 3 { // the checkpoint and the loop's heartbeats
		hb := recv(t, b.fake.heartbeats)
		require.Equal(t, fakeLeaseToken("job_ok"), hb["job_ok"].LeaseToken)
	}
	done()
	require.Equal(t, ackCall{ID: "job_ok", Result: json.RawMessage(`"done"`), LeaseToken: fakeLeaseToken("job_ok")}, recv(t, b.fake.acks))
	b.fake.add("job_fail", `{}`)
	require.Equal(t, failCall{ID: "job_fail", Error: "boom", LeaseToken: fakeLeaseToken("job_fail")}, recv(t, b.fake.fails))
	require.NoError(t, b.stop(t))
}

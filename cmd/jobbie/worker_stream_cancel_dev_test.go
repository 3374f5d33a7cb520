package main

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/client"
	jobbiev1 "github.com/jobbie/jobbie/proto/gen/jobbie/v1"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// cancelBound is what the tests assert of a cancel's way to the worker:
// generous for a loaded CI machine; the bar is 100 ms, and the delays
// measured are logged.
const cancelBound = 2 * time.Second

// A running job of a stream with no credit left, whose leases last an
// hour and which sends no heartbeat, is cancelled through the HTTP API:
// its Cancel frame arrives at once, naming the job and its lease, and a
// job of another worker is not named.
func TestWorkerStreamCancelReachesAWorkerWithNoCreditAgainstDev(t *testing.T) {
	t.Parallel()
	d := startDevIn(t, t.TempDir(), "--grpc-addr", "127.0.0.1:0")
	ctx := context.Background()
	key := readKey(t, filepath.Join(d.dir, "owner.key"))
	api := client.New(d.gateway, key)
	hc := h2c(t)

	other := openStream(t, hc, d.grpc, key, &jobbiev1.WorkRequest{Hello: hello("w-other", "1h", "long"), Credit: &jobbiev1.Credit{N: 1}})
	_, err := api.Enqueue(ctx, client.EnqueueRequest{Queue: "long"})
	require.NoError(t, err)
	others := other.waitJobs(t, 1)

	s := openStream(t, hc, d.grpc, key, &jobbiev1.WorkRequest{Hello: hello("w-cancel", "1h", "long")})
	var delays []time.Duration
	for round := range 5 {
		_, err := api.Enqueue(ctx, client.EnqueueRequest{Queue: "long"})
		require.NoError(t, err)
		s.send(t, &jobbiev1.WorkRequest{Credit: &jobbiev1.Credit{N: 1}})
		j := s.waitJobs(t, round+1)[round] // and now no credit is left
		start := time.Now()
		res, err := api.CancelJob(ctx, j.GetJobId())
		require.NoError(t, err)
		require.Equal(t, wire.CancelRequested, res)
		s.until(t, "cancel", func() bool { return len(s.cancels) > round })
		delays = append(delays, time.Since(start))
		s.mu.Lock()
		c := s.cancels[round]
		s.mu.Unlock()
		require.Equal(t, j.GetJobId(), c.GetJobId())
		require.Equal(t, j.GetLeaseToken(), c.GetLeaseToken())
		// It settles the job with a fail: cancelled.
		corr := uint64(100 + round)
		s.send(t, &jobbiev1.WorkRequest{Fails: []*jobbiev1.Fail{{CorrelationId: corr, JobId: j.GetJobId(), LeaseToken: j.GetLeaseToken(), Error: "stopped"}}})
		require.Equal(t, wire.StateCancelled, s.waitResults(t, corr)[corr].GetStatus())
	}
	t.Logf("cancel → Cancel frame (the HTTP cancel's round trip included), 5 rounds: %v", delays)
	require.Less(t, slices.Max(delays), cancelBound, "%v", delays)
	s.mu.Lock()
	require.Len(t, s.cancels, 5, "each cancel once")
	s.mu.Unlock()
	other.mu.Lock()
	require.Empty(t, other.cancels, "another worker is told nothing")
	other.mu.Unlock()
	got, err := api.GetJob(ctx, others[0].GetJobId())
	require.NoError(t, err)
	require.Equal(t, wire.StateActive, got.State)
}

// The Go SDK's stream worker, heartbeating once an hour, stops the
// handler of a job cancelled through the HTTP API at once: its context
// ends with ErrJobCancelled, and the job ends cancelled.
func TestStreamWorkerCancelStopsTheHandlerAgainstDev(t *testing.T) {
	t.Parallel()
	d := startDevIn(t, t.TempDir(), "--grpc-addr", "127.0.0.1:0")
	ctx := context.Background()
	key := readKey(t, filepath.Join(d.dir, "owner.key"))
	api := client.New(d.gateway, key)
	started := make(chan string, 1)
	stopped := make(chan error, 1)
	w := client.NewWorker(api, client.WorkerConfig{Queues: []string{"sdk-long"}, Concurrency: 1, WorkerID: "w-sdk",
		LeaseDuration: 2 * time.Hour, HeartbeatInterval: time.Hour, Transport: client.TransportStream, StreamURL: d.grpc},
		func(ctx context.Context, j *client.JobContext) (any, error) {
			started <- j.ID
			<-ctx.Done()
			stopped <- context.Cause(ctx)
			return nil, context.Cause(ctx)
		})
	runCtx, stop := context.WithCancel(ctx)
	ran := make(chan error, 1)
	go func() { ran <- w.Run(runCtx) }()
	t.Cleanup(func() { stop(); <-ran })

	_, err := api.Enqueue(ctx, client.EnqueueRequest{Queue: "sdk-long"})
	require.NoError(t, err)
	var id string
	select {
	case id = <-started:
	case err := <-ran:
		ran <- err // for the cleanup
		t.Fatalf("the worker stopped: %v", err)
	case <-time.After(time.Minute):
		t.Fatal("the job did not start")
	}
	start := time.Now()
	_, err = api.CancelJob(ctx, id)
	require.NoError(t, err)
	select {
	case cause := <-stopped:
		took := time.Since(start)
		t.Logf("cancel → handler's context done: %s", took)
		require.ErrorIs(t, cause, client.ErrJobCancelled)
		require.Less(t, took, cancelBound)
	case <-time.After(time.Minute):
		t.Fatal("the handler was not stopped")
	}
	eventually(t, "the job is cancelled", func() bool {
		j, err := api.GetJob(ctx, id)
		return err == nil && j.State == wire.StateCancelled
	})
}

// A stream whose key is revoked through the HTTP API ends Unauthenticated
// within the revocation bound, though it has nothing to fetch, sends
// nothing, and its keep-alive tick is an hour away; the job it holds is
// not released (its lease runs out).
func TestWorkerStreamEndsWhenItsKeyIsRevokedAgainstDev(t *testing.T) {
	t.Parallel()
	d := startDevIn(t, t.TempDir(), "--grpc-addr", "127.0.0.1:0", "--grpc-keepalive", "1h")
	ctx := context.Background()
	api := client.New(d.gateway, readKey(t, filepath.Join(d.dir, "owner.key")))
	wk, err := api.CreateKey(ctx, client.CreateKeyRequest{Name: "stream", Role: tenancy.RoleWorker, Namespaces: []string{tenancy.AllNamespaces}})
	require.NoError(t, err)
	_, err = api.Enqueue(ctx, client.EnqueueRequest{Queue: "revoke"})
	require.NoError(t, err)
	s := openStream(t, h2c(t), d.grpc, wk.Token, &jobbiev1.WorkRequest{Hello: hello("w-revoked", "1h", "revoke"), Credit: &jobbiev1.Credit{N: 1}})
	held := s.waitJobs(t, 1)[0]

	start := time.Now()
	require.NoError(t, api.DeleteKey(ctx, wk.ID))
	err = s.waitEnd(t)
	took := time.Since(start)
	t.Logf("key revoked → stream ended: %s", took)
	var ce *connect.Error
	require.True(t, errors.As(err, &ce), "%v", err)
	require.Equal(t, connect.CodeUnauthenticated, ce.Code(), "%v", err)
	require.Contains(t, ce.Message(), "revoked")
	// Below the 10 s of a fetch's wait: the stream did not wait for one.
	require.Less(t, took, 8*time.Second)
	j, err := api.GetJob(ctx, held.GetJobId())
	require.NoError(t, err)
	require.Equal(t, wire.StateActive, j.State, "its lease runs out")
}

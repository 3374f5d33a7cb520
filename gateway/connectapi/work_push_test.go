package connectapi

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/apierr"
	jobbiev1 "github.com/jobbie/jobbie/proto/gen/jobbie/v1"
	"github.com/jobbie/jobbie/wire"
)

// A stream with no credit left keeps a fetch with max 0 waiting, and the
// cancels its answer brings go to the worker as a Cancel frame at once,
// with no heartbeat of the job.
func TestWorkStreamWithNoCreditHearsCancels(t *testing.T) {
	t.Parallel()
	f := newWorkerRoute(1)
	f.watch = make(chan struct{})
	bidi := serveWork(t, f, WorkConfig{}).Work(context.Background())
	require.NoError(t, bidi.Send(&jobbiev1.WorkRequest{Hello: &jobbiev1.Hello{WorkerId: "w1", Queues: []string{"q"}}, Credit: &jobbiev1.Credit{N: 1}}))
	jobs := recv(t, bidi, func(r *jobbiev1.WorkResponse) bool { return len(r.GetJobs()) > 0 }).GetJobs()
	require.Len(t, jobs, 1)
	require.Eventually(t, func() bool { return len(f.requests("/api/v1/fetch/batch")) > len(f.jobFetches(t)) }, time.Minute, 5*time.Millisecond,
		"a fetch with max 0 waits")

	f.mu.Lock()
	f.cancels = []wire.JobCancel{{JobID: jobs[0].GetJobId(), LeaseToken: jobs[0].GetLeaseToken()}}
	f.mu.Unlock()
	close(f.watch) // the waiting fetch answers, as the shard's does on the cancel
	c := recv(t, bidi, func(r *jobbiev1.WorkResponse) bool { return len(r.GetCancels()) > 0 }).GetCancels()
	require.Equal(t, []string{jobs[0].GetJobId(), jobs[0].GetLeaseToken()}, []string{c[0].GetJobId(), c[0].GetLeaseToken()})
	require.Empty(t, f.requests("/api/v1/heartbeat"))
	require.Len(t, f.jobFetches(t), 1, "no credit, no fetch for jobs")
	require.NoError(t, bidi.CloseRequest())
}

// The stream judges its key again when the revocation list changes: a
// revoked key ends it Unauthenticated at once, though a fetch of it still
// waits on the shard; a key that cannot be judged for now (a stale list)
// does not end it.
func TestWorkStreamEndsWhenItsKeyIsRevoked(t *testing.T) {
	t.Parallel()
	f := newWorkerRoute(0)
	f.watch = make(chan struct{})
	t.Cleanup(func() { close(f.watch) })
	var verdict atomic.Pointer[apierr.Error]
	var checks atomic.Int32
	changed := make(chan chan struct{}, 1)
	changed <- make(chan struct{})
	next := func() <-chan struct{} { ch := <-changed; changed <- ch; return ch }
	bump := func(e *apierr.Error) {
		verdict.Store(e)
		ch := <-changed
		changed <- make(chan struct{})
		close(ch)
	}
	cfg := WorkConfig{KeysChanged: next, CheckKey: func(h string) error {
		require.Equal(t, "Bearer k", h)
		defer checks.Add(1)
		if e := verdict.Load(); e != nil {
			return e
		}
		return nil
	}}
	bidi := serveWork(t, f, cfg).Work(context.Background())
	bidi.RequestHeader().Set("Authorization", "Bearer k")
	require.NoError(t, bidi.Send(&jobbiev1.WorkRequest{Hello: &jobbiev1.Hello{WorkerId: "w1", Queues: []string{"q"}}}))
	require.Eventually(t, func() bool { return len(f.requests("/api/v1/fetch/batch")) > 0 }, time.Minute, 5*time.Millisecond)

	bump(apierr.Retry(apierr.RevocationsStale, 5, "stale"))
	require.Eventually(t, func() bool { return checks.Load() > 0 }, time.Minute, 5*time.Millisecond)
	bump(apierr.New(apierr.Unauthenticated, "API key key_1 has been revoked"))
	start := time.Now()
	for {
		_, err := bidi.Receive()
		if err == nil {
			continue
		}
		require.Equal(t, connect.CodeUnauthenticated, connect.CodeOf(err), "%v", err)
		require.Contains(t, err.Error(), "revoked")
		break
	}
	require.Less(t, time.Since(start), 30*time.Second, "not after the waiting fetch")
	require.Len(t, f.requests("/api/v1/fetch/batch"), 1, "the fetch still waits: the stream did not wait for it")
}

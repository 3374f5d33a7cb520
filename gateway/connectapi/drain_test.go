package connectapi

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"

	jobbiev1 "github.com/jobbie/jobbie/proto/gen/jobbie/v1"
)

// A worker drained while it runs jobs (its heartbeat's answer says so)
// is sent Drain, marked as the worker's own, and fetched for no more
// whatever credit it grants; its reports are still served, and what it
// holds when it closes is released. A drained worker that connects
// again is sent Drain by its first fetch, and the stream, with nothing
// to do, ends FailedPrecondition.
func TestWorkStreamWorkerDrain(t *testing.T) {
	t.Parallel()
	f := newWorkerRoute(5)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a frame that never comes fails the test
	defer cancel()
	bidi := serveWork(t, f, WorkConfig{}).Work(ctx)
	defer func() { _ = bidi.CloseResponse() }()
	require.NoError(t, bidi.Send(&jobbiev1.WorkRequest{Hello: &jobbiev1.Hello{WorkerId: "w1", Queues: []string{"q"}}, Credit: &jobbiev1.Credit{N: 2}}))
	var jobs []*jobbiev1.LeasedJob
	for len(jobs) < 2 {
		jobs = append(jobs, recv(t, bidi, func(r *jobbiev1.WorkResponse) bool { return len(r.GetJobs()) > 0 }).GetJobs()...)
	}
	f.mu.Lock()
	f.drain = true
	f.mu.Unlock()
	require.NoError(t, bidi.Send(&jobbiev1.WorkRequest{Heartbeats: []*jobbiev1.Heartbeat{
		{CorrelationId: 1, JobId: jobs[0].GetJobId(), LeaseToken: jobs[0].GetLeaseToken()}}}))
	var drain *jobbiev1.Drain
	var results []*jobbiev1.Result
	for drain == nil || len(results) == 0 {
		r := recv(t, bidi, func(*jobbiev1.WorkResponse) bool { return true })
		require.Empty(t, r.GetJobs(), "no job after the drain")
		if r.GetDrain() != nil {
			drain = r.GetDrain()
		}
		results = append(results, r.GetResults()...)
	}
	require.True(t, drain.GetWorker(), "the worker's own drain")
	require.Empty(t, drain.GetDeadline(), "the stream stays until the worker closes it")
	require.Equal(t, "ok", results[0].GetStatus())
	fetches := len(f.requests("/api/v1/fetch/batch"))

	// Credit after the drain fetches nothing; the ack is served.
	require.NoError(t, bidi.Send(&jobbiev1.WorkRequest{Credit: &jobbiev1.Credit{N: 3}, Acks: []*jobbiev1.Ack{
		{CorrelationId: 2, JobId: jobs[0].GetJobId(), LeaseToken: jobs[0].GetLeaseToken()}}}))
	r := recv(t, bidi, func(r *jobbiev1.WorkResponse) bool { return len(r.GetResults()) > 0 })
	require.Equal(t, "completed", r.GetResults()[0].GetStatus())
	require.NoError(t, bidi.CloseRequest())
	_, err := bidi.Receive()
	require.True(t, errors.Is(err, io.EOF), "%v", err)
	require.Len(t, f.requests("/api/v1/fetch/batch"), fetches, "no fetch after the drain")
	require.Len(t, f.requests("/api/v1/release"), 1, "the job still held is released")

	// Connecting again while drained.
	again := serveWork(t, f, WorkConfig{}).Work(ctx)
	defer func() { _ = again.CloseResponse() }()
	require.NoError(t, again.Send(&jobbiev1.WorkRequest{Hello: &jobbiev1.Hello{WorkerId: "w1", Queues: []string{"q"}}, Credit: &jobbiev1.Credit{N: 2}}))
	d := recv(t, again, func(r *jobbiev1.WorkResponse) bool { return r.GetDrain() != nil }).GetDrain()
	require.True(t, d.GetWorker())
	_, err = again.Receive()
	require.Equal(t, connect.CodeFailedPrecondition, connect.CodeOf(err), "%v", err)
}

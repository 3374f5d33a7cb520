package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/jobbie/jobbie/client"
	jobbiev1 "github.com/jobbie/jobbie/proto/gen/jobbie/v1"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

func hello(worker, lease string, queues ...string) *jobbiev1.Hello {
	return &jobbiev1.Hello{WorkerId: worker, Hostname: "test", Queues: queues, Concurrency: 10, LeaseDuration: lease}
}

// The worker stream against jobbie dev, frame by frame: jobs come up to
// the credit and no further; one frame's acks are answered in one frame,
// an ack's follow-up job is enqueued before its result; a fail with a
// retry brings the job back as its next attempt; a heartbeat's progress
// is what GET job shows; a cancel comes back as a Cancel frame; a
// standalone enqueue is answered with its job.
func TestWorkerStreamFramesAgainstDev(t *testing.T) {
	t.Parallel()
	d := startDevIn(t, t.TempDir(), "--grpc-addr", "127.0.0.1:0")
	ctx := context.Background()
	key := readKey(t, filepath.Join(d.dir, "owner.key"))
	api := client.New(d.gateway, key)
	one := 1
	var ids []string
	for i := range 4 {
		r, err := api.Enqueue(ctx, client.EnqueueRequest{Queue: "frames", Payload: map[string]int{"n": i}, MaxRetries: &one, RetryBackoff: client.BackoffNone})
		require.NoError(t, err)
		ids = append(ids, r.JobID)
	}

	s := openStream(t, h2c(t), d.grpc, key, &jobbiev1.WorkRequest{Hello: hello("w-frames", "", "frames"), Credit: &jobbiev1.Credit{N: 3}})
	jobs := s.waitJobs(t, 3)
	require.Len(t, jobs, 3, "never more jobs than the credit")
	for _, j := range jobs {
		require.NotEmpty(t, j.GetLeaseToken())
		require.EqualValues(t, 1, j.GetAttempt())
	}

	// One frame: two acks (one with a follow-up job), a fail, a heartbeat
	// with progress of a job not settled in it, and an enqueue.
	progress, err := structpb.NewValue(map[string]any{"current": 5, "total": 10})
	require.NoError(t, err)
	result, err := structpb.NewValue(map[string]any{"ok": true})
	require.NoError(t, err)
	s.send(t, &jobbiev1.WorkRequest{
		Acks: []*jobbiev1.Ack{
			{CorrelationId: 1, JobId: jobs[0].GetJobId(), LeaseToken: jobs[0].GetLeaseToken(), Result: result,
				Enqueue: []*jobbiev1.EnqueueRequest{{Queue: "followups"}}},
			{CorrelationId: 2, JobId: jobs[1].GetJobId(), LeaseToken: jobs[1].GetLeaseToken()},
		},
		Heartbeats: []*jobbiev1.Heartbeat{{CorrelationId: 3, JobId: jobs[2].GetJobId(), LeaseToken: jobs[2].GetLeaseToken(), Progress: progress}},
		Enqueues:   []*jobbiev1.Enqueue{{CorrelationId: 4, Job: &jobbiev1.EnqueueRequest{Queue: "elsewhere"}}},
	})
	res := s.waitResults(t, 1, 2, 3, 4)
	require.Equal(t, wire.StateCompleted, res[1].GetStatus(), "%v", res[1])
	require.Equal(t, wire.StateCompleted, res[2].GetStatus(), "%v", res[2])
	require.Equal(t, wire.HeartbeatOK, res[3].GetStatus(), "%v", res[3])
	require.Equal(t, wire.StatePending, res[4].GetStatus(), "%v", res[4])
	s.mu.Lock()
	require.Equal(t, s.resFrm[1], s.resFrm[2], "one frame's acks are answered in one frame")
	s.mu.Unlock()
	require.Len(t, res[1].GetEnqueued(), 1, "the ack's follow-up job")
	follow, err := api.GetJob(ctx, res[1].GetEnqueued()[0].GetJobId())
	require.NoError(t, err)
	require.Equal(t, "followups", follow.Queue)
	require.Len(t, res[4].GetEnqueued(), 1)

	done, err := api.GetJob(ctx, jobs[0].GetJobId())
	require.NoError(t, err)
	require.Equal(t, wire.StateCompleted, done.State)
	require.JSONEq(t, `{"ok":true}`, string(done.Result))
	running, err := api.GetJob(ctx, jobs[2].GetJobId())
	require.NoError(t, err)
	require.Equal(t, &client.Progress{Current: 5, Total: 10}, running.Progress, "the heartbeat's progress")

	// A fail with a retry left and no backoff: the job is pending again,
	// and comes back on the stream as attempt 2 once there is credit.
	s.send(t, &jobbiev1.WorkRequest{Fails: []*jobbiev1.Fail{{CorrelationId: 5, JobId: jobs[2].GetJobId(), LeaseToken: jobs[2].GetLeaseToken(), Error: "boom"}}})
	require.Equal(t, wire.StatePending, s.waitResults(t, 5)[5].GetStatus())
	s.send(t, &jobbiev1.WorkRequest{Credit: &jobbiev1.Credit{N: 2}})
	all := s.waitJobs(t, 5)
	byID := map[string]*jobbiev1.LeasedJob{}
	for _, j := range all[3:] {
		byID[j.GetJobId()] = j
	}
	require.Contains(t, byID, jobs[2].GetJobId(), "the failed job again")
	require.EqualValues(t, 2, byID[jobs[2].GetJobId()].GetAttempt())
	require.Contains(t, byID, ids[3])

	// Cancel a running job: a Cancel frame names it (at once: the stream's
	// waiting fetch answers), and its next heartbeat says so too.
	again := byID[jobs[2].GetJobId()]
	_, err = api.CancelJob(ctx, again.GetJobId())
	require.NoError(t, err)
	s.until(t, "cancel", func() bool { return len(s.cancels) > 0 })
	s.send(t, &jobbiev1.WorkRequest{ExtendLeases: []*jobbiev1.ExtendLease{{CorrelationId: 6, JobId: again.GetJobId(), LeaseToken: again.GetLeaseToken()}}})
	require.Equal(t, wire.HeartbeatCancel, s.waitResults(t, 6)[6].GetStatus())
	s.mu.Lock()
	for _, c := range s.cancels {
		require.Equal(t, again.GetJobId(), c.GetJobId())
		require.Equal(t, again.GetLeaseToken(), c.GetLeaseToken())
	}
	s.mu.Unlock()

	// Bad input answers its own result and ends nothing: a fail naming no
	// job, a lease extension of another length.
	s.send(t, &jobbiev1.WorkRequest{Fails: []*jobbiev1.Fail{{CorrelationId: 7}},
		ExtendLeases: []*jobbiev1.ExtendLease{{CorrelationId: 8, JobId: ids[3], LeaseDuration: "5m"}}})
	bad := s.waitResults(t, 7, 8)
	require.Equal(t, string(wire.CodeBadRequest), bad[7].GetErrorCode())
	require.Contains(t, bad[8].GetErrorMessage(), "lease_duration")

	// Closing cleanly gives back what the worker still holds: the last
	// job is pending again at once, its attempt not counted.
	s.closeSend(t)
	require.NoError(t, s.waitEnd(t))
	back, err := api.GetJob(ctx, ids[3])
	require.NoError(t, err)
	require.Equal(t, wire.StatePending, back.State)
	require.Equal(t, 0, back.Attempt, "a released attempt does not count")
}

// The stream's refusals: no hello first is InvalidArgument naming it; a
// viewer key is PermissionDenied at its first fetch, as HTTP's 403; no key
// is Unauthenticated; another tenant's key never receives this tenant's
// jobs. And an idle stream hears keep-alives (--grpc-keepalive).
func TestWorkerStreamRefusalsAgainstDev(t *testing.T) {
	t.Parallel()
	d := startDevIn(t, t.TempDir(), "--grpc-addr", "127.0.0.1:0", "--grpc-keepalive", "200ms")
	ctx := context.Background()
	key := readKey(t, filepath.Join(d.dir, "owner.key"))
	api := client.New(d.gateway, key)
	hc := h2c(t)

	idle := openStream(t, hc, d.grpc, key, &jobbiev1.WorkRequest{Hello: hello("w-idle", "", "idle")})
	idle.until(t, "keep-alives", func() bool { return idle.keep >= 2 })
	idle.closeSend(t)
	require.NoError(t, idle.waitEnd(t))

	s := openStream(t, hc, d.grpc, key, &jobbiev1.WorkRequest{Credit: &jobbiev1.Credit{N: 1}})
	ce := requireCode(t, s.waitEnd(t), connect.CodeInvalidArgument)
	require.Equal(t, "hello", badField(t, ce))

	s = openStream(t, hc, d.grpc, key, &jobbiev1.WorkRequest{Hello: hello("w", "soon", "q")})
	require.Equal(t, "hello.lease_duration", badField(t, requireCode(t, s.waitEnd(t), connect.CodeInvalidArgument)))

	vk, err := api.CreateKey(ctx, client.CreateKeyRequest{Name: "dash", Role: tenancy.RoleViewer, Namespaces: []string{tenancy.AllNamespaces}})
	require.NoError(t, err)
	s = openStream(t, hc, d.grpc, vk.Token, &jobbiev1.WorkRequest{Hello: hello("w-viewer", "", "q"), Credit: &jobbiev1.Credit{N: 1}})
	requireCode(t, s.waitEnd(t), connect.CodePermissionDenied)

	s = openStream(t, hc, d.grpc, "not-a-key", &jobbiev1.WorkRequest{Hello: hello("w-nokey", "", "q"), Credit: &jobbiev1.Credit{N: 1}})
	requireCode(t, s.waitEnd(t), connect.CodeUnauthenticated)

	var ct wire.CreatedTenant
	require.NoError(t, json.Unmarshal([]byte(d.operator(t, "", "tenants", "create", "other", "-o", "json")), &ct))
	other := openStream(t, hc, d.grpc, ct.OwnerKey, &jobbiev1.WorkRequest{Hello: hello("w-other", "", "shared"), Credit: &jobbiev1.Credit{N: 100}})
	mine := openStream(t, hc, d.grpc, key, &jobbiev1.WorkRequest{Hello: hello("w-mine", "", "shared"), Credit: &jobbiev1.Credit{N: 100}})
	for range 20 {
		_, err := api.Enqueue(ctx, client.EnqueueRequest{Queue: "shared"})
		require.NoError(t, err)
	}
	require.Len(t, mine.waitJobs(t, 20), 20, "every job to this tenant's stream")
	other.mu.Lock()
	require.Empty(t, other.jobs, "another tenant's stream got none")
	other.mu.Unlock()
}

package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/client"
	jobbiev1 "github.com/jobbie/jobbie/proto/gen/jobbie/v1"
	"github.com/jobbie/jobbie/wire"
)

// payloadNoValueHolds is JSON whose numbers a google.protobuf.Value
// cannot carry as they are: one past a double's precision, one past its
// range.
const payloadNoValueHolds = `{"big":9007199254740993,"x":1e999}`

// The Go SDK's stream worker asks for JSON payloads: its handler reads a
// payload as it was enqueued, as over HTTP, numbers a Value would round
// or refuse included.
func TestStreamWorkerGetsPayloadsAsEnqueuedAgainstDev(t *testing.T) {
	t.Parallel()
	d := startDevIn(t, t.TempDir(), "--grpc-addr", "127.0.0.1:0")
	ctx := context.Background()
	api := client.New(d.gateway, readKey(t, filepath.Join(d.dir, "owner.key")))
	_, err := api.Enqueue(ctx, client.EnqueueRequest{Queue: "raw", Payload: json.RawMessage(payloadNoValueHolds)})
	require.NoError(t, err)

	got := make(chan string, 1)
	w := client.NewWorker(api, client.WorkerConfig{Queues: []string{"raw"}, Transport: client.TransportStream, StreamURL: d.grpc},
		func(_ context.Context, job *client.JobContext) (any, error) {
			got <- string(job.Payload)
			return nil, nil
		})
	runCtx, stop := context.WithCancel(ctx)
	ran := make(chan error, 1)
	go func() { ran <- w.Run(runCtx) }()
	select {
	case p := <-got:
		require.Equal(t, payloadNoValueHolds, p)
	case err := <-ran:
		t.Fatalf("the worker stopped: %v", err)
	case <-time.After(time.Minute):
		t.Fatal("the job did not run within a minute")
	}
	stop()
	require.NoError(t, <-ran)
}

// A stream worker that takes Values gets the jobs a Value can carry; a
// job whose payload no Value holds is dead at once with the reason,
// and the stream goes on serving.
func TestWorkerStreamFailsAJobAValueCannotHoldAgainstDev(t *testing.T) {
	t.Parallel()
	d := startDevIn(t, t.TempDir(), "--grpc-addr", "127.0.0.1:0")
	ctx := context.Background()
	key := readKey(t, filepath.Join(d.dir, "owner.key"))
	api := client.New(d.gateway, key)
	bad, err := api.Enqueue(ctx, client.EnqueueRequest{Queue: "values", Payload: json.RawMessage(payloadNoValueHolds)})
	require.NoError(t, err)
	good, err := api.Enqueue(ctx, client.EnqueueRequest{Queue: "values", Payload: map[string]int{"n": 1}})
	require.NoError(t, err)

	s := openStream(t, h2c(t), d.grpc, key, &jobbiev1.WorkRequest{Hello: hello("w-values", "", "values"), Credit: &jobbiev1.Credit{N: 2}})
	jobs := s.waitJobs(t, 1)
	require.Equal(t, good.JobID, jobs[0].GetJobId())
	eventually(t, "the job no Value holds dead", func() bool {
		j, err := api.GetJob(ctx, bad.JobID)
		return err == nil && j.State == wire.StateDead
	})
	j, err := api.GetJob(ctx, bad.JobID)
	require.NoError(t, err)
	require.Equal(t, "non_retryable", j.DeadReason)
	require.Len(t, j.Errors, 1)
	require.Contains(t, j.Errors[0].Error, "json_payloads")

	s.send(t, &jobbiev1.WorkRequest{Acks: []*jobbiev1.Ack{{CorrelationId: 1, JobId: good.JobID, LeaseToken: jobs[0].GetLeaseToken()}}})
	require.Equal(t, wire.StateCompleted, s.waitResults(t, 1)[1].GetStatus())
}

// A payload whose number no Value holds is as long as the shard lets a
// payload be: the job is dead with the reason all the same, since the
// reason names the number by its head (a fail's error is bounded).
func TestWorkerStreamFailsAJobWithALongNumberAgainstDev(t *testing.T) {
	t.Parallel()
	d := startDevIn(t, t.TempDir(), "--grpc-addr", "127.0.0.1:0")
	ctx := context.Background()
	key := readKey(t, filepath.Join(d.dir, "owner.key"))
	api := client.New(d.gateway, key)
	long := `{"n":1` + strings.Repeat("0", wire.MaxErrorBytes) + `}`
	bad, err := api.Enqueue(ctx, client.EnqueueRequest{Queue: "values", Payload: json.RawMessage(long)})
	require.NoError(t, err)

	openStream(t, h2c(t), d.grpc, key, &jobbiev1.WorkRequest{Hello: hello("w-long", "", "values"), Credit: &jobbiev1.Credit{N: 1}})
	eventually(t, "the job no Value holds dead", func() bool {
		j, err := api.GetJob(ctx, bad.JobID)
		return err == nil && j.State == wire.StateDead
	})
	j, err := api.GetJob(ctx, bad.JobID)
	require.NoError(t, err)
	require.Equal(t, "non_retryable", j.DeadReason)
	require.Contains(t, j.Errors[0].Error, "out of a double's range")
}

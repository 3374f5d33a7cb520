package main

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/client"
)

// Over the gRPC worker stream, a handler's usage reports ride the
// Heartbeat and Ack frames, and the job sums them exactly, as over HTTP.
func TestAIUsageOverTheWorkerStream(t *testing.T) {
	t.Parallel()
	d := startDevIn(t, t.TempDir(), "--grpc-addr", "127.0.0.1:0")
	ctx := context.Background()
	api := client.New(d.gateway, readKey(t, filepath.Join(d.dir, "owner.key")))
	r, err := api.Enqueue(ctx, client.EnqueueRequest{Queue: "ai.stream", Payload: 1})
	require.NoError(t, err)
	heartbeated := make(chan struct{})
	w := client.NewWorker(api, client.WorkerConfig{Queues: []string{"ai.stream"}, WorkerID: "ai-stream", FetchTimeout: time.Second,
		HeartbeatInterval: 50 * time.Millisecond, Transport: client.TransportStream},
		func(hctx context.Context, j *client.JobContext) (any, error) {
			if err := j.ReportUsage(client.AIUsage{InputTokens: 100, CostUSD: "0.1", Model: "haiku"}); err != nil {
				return nil, err
			}
			if err := j.ReportUsage(client.AIUsage{InputTokens: 1, CostUSD: "0.2"}); err != nil {
				return nil, err
			}
			// A heartbeat frame delivers the first two; wait for it on the server.
			for {
				dj, err := api.GetJob(hctx, j.ID)
				if err != nil {
					return nil, err
				}
				if dj.Usage != nil {
					close(heartbeated)
					break
				}
				select {
				case <-hctx.Done():
					return nil, hctx.Err()
				case <-time.After(20 * time.Millisecond):
				}
			}
			return nil, j.ReportUsage(client.AIUsage{OutputTokens: 5, CostUSD: "0.000000001", Provider: "anthropic"})
		})
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- w.Run(runCtx) }()
	var dj *client.JobDetail
	eventually(t, "the job completed", func() bool {
		dj, err = api.GetJob(ctx, r.JobID)
		return err == nil && dj.State == "completed"
	})
	stop()
	require.NoError(t, <-done)
	select {
	case <-heartbeated:
	default:
		t.Fatal("no heartbeat carried the first reports")
	}
	require.Equal(t, client.TransportStream, w.Transport())
	require.Equal(t, &client.AIUsage{InputTokens: 101, OutputTokens: 5, CostUSD: "0.300000001", Model: "haiku", Provider: "anthropic"}, dj.Usage)
}

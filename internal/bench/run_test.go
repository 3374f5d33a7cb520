package bench

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"testing"
	"time"

	"github.com/jobbie/jobbie/internal/pki"
	"github.com/jobbie/jobbie/internal/pki/pkitest"
	"github.com/stretchr/testify/require"
)

// gatewayConfig is a short run against fake f through the "gateway".
func gatewayConfig(f *fakeShard, tweak func(*Config)) Config {
	cfg := Config{
		URL: f.srv.URL, Key: "k", Producers: 2, Workers: 4, Jobs: 300,
		Duration: 20 * time.Second, FetchTimeout: 100 * time.Millisecond,
		MaxOutstanding: 100, ProgressEvery: 10 * time.Millisecond,
	}
	if tweak != nil {
		tweak(&cfg)
	}
	return cfg
}

// requireConsistent checks a report against what the fake did.
func requireConsistent(t *testing.T, f *fakeShard, rep *Report, foreign int) {
	t.Helper()
	enq, del, ack, rej := f.counts()
	require.Equal(t, int64(enq), rep.Enqueued)
	require.Equal(t, int64(del), rep.Delivered)
	require.Equal(t, int64(ack), rep.Acked)
	require.Equal(t, int64(rej), rep.Errors["rate_limited"])
	require.Equal(t, int64(foreign), rep.Unmatched)
	require.Equal(t, rep.EnqueueCalls, rep.EnqueueLatency.Count)
	if rep.AckBatch > 1 {
		require.LessOrEqual(t, rep.AckLatency.Count, rep.Acked, "one sample per ack call")
	} else {
		require.Equal(t, rep.Acked, rep.AckLatency.Count)
	}
	// Every delivery of this run's jobs produced one latency sample.
	require.Equal(t, rep.Delivered-rep.Unmatched, rep.DeliveryLatency.Count)
	require.Equal(t, rep.DeliveryLatency.Count, rep.PickupLatency.Count)
	require.LessOrEqual(t, rep.DeliveryLatency.P50, rep.PickupLatency.P50)
	require.LessOrEqual(t, rep.Acked, rep.Delivered)
	require.LessOrEqual(t, rep.Delivered-rep.Unmatched, rep.Enqueued)
	require.Greater(t, rep.JobRate, 0.0)
	require.Greater(t, rep.EnqueueRate, 0.0)
}

func TestRunCountsAreConsistent(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		transport string
		batch     int
	}{
		{"fasthttp single", TransportFast, 1},
		{"fasthttp batch", TransportFast, 10},
		{"nethttp single", TransportStd, 1},
		{"nethttp batch", TransportStd, 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFakeShard(t, map[string]string{"Authorization": "Bearer k"})
			f.foreign(3)
			f.rejectEvery = 7
			var out lines
			rep, err := Run(context.Background(), gatewayConfig(f, func(c *Config) {
				c.Transport, c.Batch = tc.transport, tc.batch
			}), &out)
			require.NoError(t, err)
			require.GreaterOrEqual(t, rep.Acked, int64(300))
			require.Positive(t, rep.Errors["rate_limited"])
			requireConsistent(t, f, rep, 3)
			require.Contains(t, out.String(), "jobbie bench: throughput via gateway")
		})
	}
}

func TestRunDirectToShard(t *testing.T) {
	t.Parallel()
	const ns = "t_01hx7y2k3m0000000000000000/default"
	ca := pkitest.New(t)
	shard := ca.Creds(t, pkitest.Shard("s1", "n1"))
	for _, tr := range []string{TransportFast, TransportStd} {
		f := newFakeShardTLS(t, shard, map[string]string{"X-Jobbie-Shard-Namespace": ns})
		rep, err := Run(context.Background(), Config{
			DirectURL: f.srv.URL, TLS: ca.Creds(t, pkitest.Operator).Client(pki.Roles(pki.RoleShard)), ShardNamespace: ns,
			Transport: tr, Jobs: 50, Duration: 20 * time.Second, FetchTimeout: 100 * time.Millisecond, ProgressEvery: -1,
		}, &lines{})
		require.NoError(t, err, tr)
		require.True(t, rep.Direct)
		requireConsistent(t, f, rep, 0)
	}
	// A gateway's certificate is refused at the handshake.
	f := newFakeShardTLS(t, shard, nil)
	rep, err := Run(context.Background(), Config{
		DirectURL: f.srv.URL, TLS: ca.Creds(t, pkitest.Gateway).Client(nil), ShardNamespace: ns,
		Duration: 300 * time.Millisecond, FetchTimeout: 100 * time.Millisecond, ProgressEvery: -1,
	}, &lines{})
	require.ErrorContains(t, err, "no job completed")
	require.Zero(t, rep.Enqueued)
}

func TestRunDurationBound(t *testing.T) {
	t.Parallel()
	f := newFakeShard(t, nil)
	rep, err := Run(context.Background(), gatewayConfig(f, func(c *Config) {
		c.Jobs, c.Duration = 0, 300*time.Millisecond
	}), &lines{})
	require.NoError(t, err)
	require.GreaterOrEqual(t, rep.Elapsed, 300*time.Millisecond)
	require.Less(t, rep.Elapsed, 2*time.Second, "the window ends at the deadline, not after the drain")
	requireConsistent(t, f, rep, 0)
}

func TestRunLatencyMode(t *testing.T) {
	t.Parallel()
	f := newFakeShard(t, nil)
	rep, err := Run(context.Background(), gatewayConfig(f, func(c *Config) {
		c.Latency, c.Producers, c.Workers, c.Jobs = true, 0, 0, 20
	}), &lines{})
	require.NoError(t, err)
	require.Equal(t, "latency", rep.Mode)
	require.Equal(t, 1, rep.Producers)
	require.Equal(t, int64(20), rep.Acked)
	require.Equal(t, int64(20), rep.PickupLatency.Count)
	require.Empty(t, rep.Errors)
	requireConsistent(t, f, rep, 0)
}

func TestRunBoundsOutstandingJobs(t *testing.T) {
	t.Parallel()
	f := newFakeShard(t, nil)
	f.hold = true
	rep, err := Run(context.Background(), gatewayConfig(f, func(c *Config) {
		c.Jobs, c.Duration, c.Batch, c.MaxOutstanding = 0, 300*time.Millisecond, 5, 50
	}), &lines{})
	require.ErrorContains(t, err, "no job completed")
	require.Equal(t, int64(50), rep.Enqueued, "producers stop at the bound")
	require.Zero(t, rep.Acked)
}

func TestRunReportsUnreachableServer(t *testing.T) {
	t.Parallel()
	rep, err := Run(context.Background(), Config{
		URL: "http://127.0.0.1:1", Duration: 200 * time.Millisecond, ProgressEvery: -1,
		FetchTimeout: 100 * time.Millisecond,
	}, &lines{})
	require.ErrorContains(t, err, "no job completed")
	require.Positive(t, rep.Errors["network"])
}

func TestRunRejectsBadConfig(t *testing.T) {
	t.Parallel()
	for name, cfg := range map[string]Config{
		"no url":              {},
		"bad url":             {URL: "localhost:8080"},
		"direct no tls":       {DirectURL: "https://x", ShardNamespace: "t_01hx7y2k3m0000000000000000/default"},
		"direct plain http":   {DirectURL: "http://x", TLS: &tls.Config{}, ShardNamespace: "t_01hx7y2k3m0000000000000000/default"},
		"direct bad ns":       {DirectURL: "https://x", TLS: &tls.Config{}, ShardNamespace: "default"},
		"tiny payload":        {URL: "http://x", PayloadSize: 3},
		"latency batch":       {URL: "http://x", Latency: true, Batch: 5},
		"latency fetch batch": {URL: "http://x", Latency: true, FetchBatch: 5},
		"fetch batch 1001":    {URL: "http://x", FetchBatch: 1001},
		"ack batch -1":        {URL: "http://x", AckBatch: -1},
		"bad queue":           {URL: "http://x", Queue: "no spaces"},
		"unknown transport":   {URL: "http://x", Transport: "carrier-pigeon"},
	} {
		_, err := Run(context.Background(), cfg, &lines{})
		require.Error(t, err, name)
	}
}

func TestReportJSON(t *testing.T) {
	t.Parallel()
	rep := &Report{Mode: "throughput", Elapsed: 1500 * time.Millisecond, Acked: 3,
		EnqueueLatency: Latency{Count: 2, P50: 2 * time.Millisecond}}
	b, err := json.Marshal(rep)
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(b, &m))
	require.InDelta(t, 1.5, m["elapsed_seconds"], 1e-9)
	require.InDelta(t, 2.0, m["enqueue_latency"].(map[string]any)["p50_ms"], 1e-9)
	require.Equal(t, map[string]any{}, m["errors"])
}

func TestPayloadSize(t *testing.T) {
	t.Parallel()
	var job struct {
		Payload json.RawMessage `json:"payload"`
	}
	require.NoError(t, json.Unmarshal(jobBody("q", 100), &job))
	require.Len(t, job.Payload, 100)
	var batch struct {
		Jobs []json.RawMessage `json:"jobs"`
	}
	require.NoError(t, json.Unmarshal(enqueueBody("q", 64, 3), &batch))
	require.Len(t, batch.Jobs, 3)
}

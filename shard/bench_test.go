package shard

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jobbie/jobbie/shard/service"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// BenchmarkEngineLifecycle drives enqueue (batches of 100), fetch and ack
// straight through a node's service, without HTTP: the engine's own
// ceiling, Raft and fsync included.
func BenchmarkEngineLifecycle(b *testing.B) { lifecycle(b, tenancy.AllQueues()) }

// BenchmarkScopedLifecycle is BenchmarkEngineLifecycle for a key limited
// to some queues (wire.QueueScopeHeader): each ack first reads its job to
// check the job's queue. BenchmarkEngineLifecycle, every queue, reads
// nothing more and matches its numbers from before scopes existed.
func BenchmarkScopedLifecycle(b *testing.B) {
	lifecycle(b, tenancy.ParseQueueScope("emails.*,reports.daily,bench"))
}

func lifecycle(b *testing.B, sc tenancy.QueueScope) {
	n := openBenchNode(b, b.TempDir(), false)
	defer n.Stop()
	e := n.Service()
	b.ReportAllocs()
	b.ResetTimer()
	var done atomic.Int64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		r := &wire.BatchRequest{Jobs: make([]wire.EnqueueRequest, 100)}
		for i := range r.Jobs {
			r.Jobs[i] = wire.EnqueueRequest{Queue: "bench", Payload: []byte(`{"n":1}`)}
		}
		for n := 0; n < b.N; n += len(r.Jobs) {
			if _, err := e.EnqueueBatch(context.Background(), testNS, sc, service.Limits{}, r); err != nil {
				b.Error(err)
				return
			}
		}
	}()
	timeout := 1.0
	for w := 0; w < 32; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for done.Load() < int64(b.N) {
				j, err := e.Fetch(context.Background(), testNS, &wire.FetchRequest{Queues: []string{"bench"}, WorkerID: "w", Timeout: &timeout}, nil)
				if err != nil {
					b.Error(err)
					return
				}
				if j == nil {
					continue
				}
				if _, err := e.Ack(context.Background(), testNS, sc, service.Limits{}, j.JobID, &wire.AckRequest{}); err != nil {
					b.Error(err)
					return
				}
				done.Add(1)
			}
		}()
	}
	wg.Wait()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "jobs/s")
}

// openBenchNode opens a single-node shard on dir, quiet, serving HTTP on
// a free port if serve, and waits until it leads.
func openBenchNode(b *testing.B, dir string, serve bool) *Node {
	cfg := Config{DataDir: dir, Bootstrap: true, TLS: nodeCreds(b, "n1"), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	if serve {
		cfg.HTTPAddr = "127.0.0.1:0"
	}
	n, err := New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	if serve {
		if err := n.Start(); err != nil {
			b.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := n.WaitLeader(ctx); err != nil {
		b.Fatal(err)
	}
	return n
}

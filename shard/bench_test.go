package shard

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkEngineLifecycle drives enqueue (batches of 100), fetch and ack
// straight through the engine, without HTTP: the engine's own ceiling.
func BenchmarkEngineLifecycle(b *testing.B) {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	e, err := OpenEngine(Config{DataDir: b.TempDir(), Bootstrap: true, ClusterSecret: testSecret, Logger: quiet})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := e.WaitLeader(ctx); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	var done atomic.Int64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		reqs := make([]EnqueueRequest, 100)
		for i := range reqs {
			reqs[i] = EnqueueRequest{Queue: "bench", Payload: []byte(`{"n":1}`)}
		}
		for n := 0; n < b.N; n += len(reqs) {
			if _, err := e.Enqueue(context.Background(), testNS, reqs, true); err != nil {
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
				j, err := e.Fetch(context.Background(), testNS, &FetchRequest{Queues: []string{"bench"}, WorkerID: "w", Timeout: &timeout})
				if err != nil {
					b.Error(err)
					return
				}
				if j == nil {
					continue
				}
				if _, err := e.Ack(context.Background(), testNS, j.ID, &AckRequest{}); err != nil {
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

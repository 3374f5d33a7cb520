package service

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/jonboulle/clockwork"

	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/shard/engine"
	"github.com/jobbie/jobbie/shard/live"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

const benchNS = "t_01hx0000000000000000000000/default"

// benchService is a service over a one-node replica that has applied
// batches enqueued jobs (so reads walk a memtable that holds some).
func benchService(b *testing.B, batches int) *Service {
	b.Helper()
	clk := clockwork.NewRealClock()
	eng := engine.New(engine.Options{})
	node, err := replica.Open(replica.Config{Dir: b.TempDir(), Bootstrap: true, Clock: clk,
		HeartbeatTimeout: 100 * time.Millisecond, ElectionTimeout: 100 * time.Millisecond, Logger: hclog.NewNullLogger()}, eng.Registry())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = node.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := node.WaitLeader(ctx); err != nil {
		b.Fatal(err)
	}
	s := New(Config{Clock: clk, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}, eng, node, live.NewWaiters(clk))
	b.Cleanup(s.Close)
	r := &wire.BatchRequest{Jobs: benchJobs()}
	for range batches {
		if _, err := s.EnqueueBatch(ctx, benchNS, tenancy.AllQueues(), Limits{}, r); err != nil {
			b.Fatal(err)
		}
	}
	return s
}

func benchJobs() []wire.EnqueueRequest {
	jobs := make([]wire.EnqueueRequest, 100)
	for i := range jobs {
		jobs[i] = wire.EnqueueRequest{Queue: "bench", Payload: []byte(`{"order":"12345678","n":1}`)}
	}
	return jobs
}

// BenchmarkEnqueueCommand is the proposer's work for one batch of 100
// jobs before Raft: the checks, ids, records and the command's encoding
// (what propose sends). ns/op is per batch.
func BenchmarkEnqueueCommand(b *testing.B) {
	s := benchService(b, 10)
	jobs := benchJobs()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		c, traced, err := s.enqueueCmd(benchNS, tenancy.AllQueues(), Limits{}, jobs, true, nil)
		if err != nil {
			b.Fatal(err)
		}
		_ = engine.EnqueueFor(c, traced).Command(c)
	}
}

// BenchmarkKeysOf is the look up of a namespace's encryption keys every
// enqueue batch makes, for a namespace without a record (the common case).
func BenchmarkKeysOf(b *testing.B) {
	s := benchService(b, 10)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if s.keysOf(benchNS) != nil {
			b.Fatal("no record was written")
		}
	}
}

// BenchmarkAckBatchChecks is an ack batch of 100 acks, each with a
// result, whose job ids are malformed: the checks of every ack and its
// answer, without a command. ns/op is per batch.
func BenchmarkAckBatchChecks(b *testing.B) {
	s := benchService(b, 0)
	r := &wire.AckBatchRequest{WorkerID: "w", Acks: make([]wire.AckBatchEntry, 100)}
	for i := range r.Acks {
		r.Acks[i] = wire.AckBatchEntry{JobID: "job_x", Result: []byte(`{"ok":true,"n":12345}`)}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		out, err := s.AckBatch(context.Background(), benchNS, tenancy.AllQueues(), Limits{}, r)
		if err != nil || out[0].Error == nil {
			b.Fatal(err)
		}
	}
}

package shard

import (
	"fmt"
	"testing"
	"time"

	"github.com/cockroachdb/pebble"

	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/shard/job"
)

// BenchmarkApplyLifecycle applies the batch-worker lifecycle (enqueue 100,
// fetch/batch 100, ack/batch 100) straight to Pebble with the node's
// options, one Pebble batch per command as the FSM commits them, without
// Raft, HTTP or fsync: the state machine's own cost per job, which every
// member of a shard pays. A backlog of 1,000 jobs waits ahead of the
// fetches, as in a loaded queue.
func BenchmarkApplyLifecycle(b *testing.B) {
	db, err := pebble.Open(b.TempDir(), replica.StateOptions())
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	e := &Engine{waiters: newWaiters()}
	reg := e.registry()
	now := time.Unix(1_800_000_000, 0).UTC()
	var idx uint64
	apply := func(t replica.CommandType, c any) any {
		bt := db.NewIndexedBatch()
		idx++
		tx := replica.NewTx(bt, now, idx)
		res, err := reg.Apply(tx, replica.Command(t, encode(c)))
		if err != nil {
			b.Fatal(err)
		}
		tx.RunBeforeCommit()
		if err := bt.Commit(pebble.NoSync); err != nil {
			b.Fatal(err)
		}
		bt.Close()
		tx.RunAfterCommit()
		now = now.Add(time.Millisecond)
		return res
	}
	seq := 0
	enqueue := func() {
		jobs := make([][]byte, 100)
		for i := range jobs {
			seq++
			jobs[i] = (&job.Job{ID: fmt.Sprintf("job_%026d", seq), Queue: "bench", Payload: []byte(`{"n":1}`), MaxRetries: 3,
				Backoff: job.BackoffExponential, BaseDelay: int64(time.Second), MaxDelay: int64(time.Minute)}).Encode()
		}
		apply(cmdEnqueue, &enqueueCmd{NS: testNS, Jobs: jobs})
	}
	for range 10 {
		enqueue()
	}
	fetch := &fetchBatchCmd{Fetch: fetchCmd{NS: testNS, Queues: []string{"bench"}, WorkerID: "w", LeaseNs: int64(time.Minute)}, Max: 100}
	items := make([]ackBatchItem, 0, 100)
	b.ReportAllocs()
	b.ResetTimer()
	for n := 0; n < b.N; n += 100 {
		enqueue()
		got := apply(cmdFetchBatch, fetch).([]*job.Job)
		items = items[:0]
		for _, j := range got {
			items = append(items, ackBatchItem{ID: j.ID})
		}
		for _, o := range apply(cmdAckBatch, &ackBatchCmd{NS: testNS, WorkerID: "w", Items: items}).([]ackOutcome) {
			if o.Err != nil {
				b.Fatal(o.Err)
			}
		}
		if len(got) != 100 {
			b.Fatalf("fetched %d jobs, want 100", len(got))
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "jobs/s")
}

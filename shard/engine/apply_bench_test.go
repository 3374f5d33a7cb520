package engine

import (
	"fmt"
	"testing"
	"time"

	"github.com/cockroachdb/pebble"

	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/shard/job"
	"github.com/jobbie/jobbie/wire"
)

// BenchmarkApplyLifecycle applies the batch-worker lifecycle (enqueue 100,
// fetch/batch 100, ack/batch 100) straight to Pebble with the node's
// options, one Pebble batch per command, without
// Raft, HTTP or fsync: the state machine's own cost per job, which every
// member of a shard pays; each command is its own entry, applied through
// the replica's group apply (replica.Local). A backlog of 1,000 jobs waits ahead of the
// fetches, as in a loaded queue. It runs before usage metering starts;
// BenchmarkApplyLifecycleMetered is the same on a shard that meters, as
// every shard does once its leader swept usage.
func BenchmarkApplyLifecycle(b *testing.B) { benchLifecycle(b, false, false, 0) }

func BenchmarkApplyLifecycleMetered(b *testing.B) { benchLifecycle(b, true, false, 0) }

// BenchmarkApplyLifecycleHistory is the metered lifecycle on a shard that
// keeps queue history too, as every shard does once its leader started
// it: each enqueue, ack and fail also counts into the queue's minute and
// hour buckets.
func BenchmarkApplyLifecycleHistory(b *testing.B) { benchLifecycle(b, true, true, 0) }

// BenchmarkApplyLifecycleBudget is the history lifecycle in a namespace
// with an AI budget that holds (namespace-wide, not reached): every
// enqueue and every fetched job meets it.
func BenchmarkApplyLifecycleBudget(b *testing.B) { benchLifecycleWith(b, true, true, 0, true) }

// BenchmarkApplyLifecycleEvents is the history lifecycle on a shard that
// keeps its event log (wide, detailed and counted), as every shard does
// once its leader started it: each job writes enqueued, started and
// completed events. singles writes one key an event (the log before its
// blocks), blocks one key an entry (EventLogStartBlocks).
func BenchmarkApplyLifecycleEvents(b *testing.B) {
	log := []replica.CommandType{EventLogStartDetailed.Type, EventLogStartCounted.Type}
	b.Run("singles", func(b *testing.B) { benchLifecycleWith(b, true, true, 0, false, log...) })
	b.Run("blocks", func(b *testing.B) {
		benchLifecycleWith(b, true, true, 0, false, append(log, EventLogStartBlocks.Type)...)
	})
}

// BenchmarkApplyLifecycleKeyed is the metered lifecycle with every job
// given one of N fairness keys in turn: a keyed queue's fetch.
func BenchmarkApplyLifecycleKeyed(b *testing.B) {
	for _, n := range []int{1, 10, 100, 1000} {
		b.Run(fmt.Sprintf("keys=%d", n), func(b *testing.B) { benchLifecycle(b, true, false, n) })
	}
}

func benchLifecycle(b *testing.B, metered, history bool, fairnessKeys int) {
	benchLifecycleWith(b, metered, history, fairnessKeys, false)
}

// benchLifecycleWith applies the starts (commands of an EventLogStartCmd)
// before the lifecycle.
func benchLifecycleWith(b *testing.B, metered, history bool, fairnessKeys int, budget bool, starts ...replica.CommandType) {
	db, err := pebble.Open(b.TempDir(), replica.StateOptions())
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	loc, err := replica.NewLocal(db, New(Options{}).Registry())
	if err != nil {
		b.Fatal(err)
	}
	now := time.Unix(1_800_000_000, 0).UTC()
	apply := func(t replica.CommandType, c any) any {
		out := loc.Apply(now, replica.Command(t, replica.Encode(c)))[0]
		if out.Err != nil {
			b.Fatal(out.Err)
		}
		now = now.Add(time.Millisecond)
		return out.Value
	}
	if metered {
		apply(UsageSweep.Type, &UsageSweepCmd{})
	}
	if history {
		apply(HistoryStart.Type, &HistoryStartCmd{})
	}
	for _, t := range starts {
		apply(t, &EventLogStartCmd{})
	}
	if budget {
		apply(BudgetPut.Type, &BudgetCmd{NS: testNS, Create: true, Budget: BudgetRecord{Name: "daily",
			Scope: wire.BudgetScopeNamespace, DailyCostNanos: 1000 * wire.AICostScale, OnExceed: wire.BudgetHold}})
	}
	seq := 0
	enqueue := func() {
		jobs := make([][]byte, 100)
		for i := range jobs {
			seq++
			j := &job.Job{ID: fmt.Sprintf("job_%026d", seq), Queue: "bench", Payload: []byte(`{"n":1}`), MaxRetries: 3,
				Backoff: job.BackoffExponential, BaseDelay: int64(time.Second), MaxDelay: int64(time.Minute)}
			if fairnessKeys > 0 {
				j.SetKeys("", fmt.Sprint("customer-", seq%fairnessKeys))
			}
			jobs[i] = j.Encode()
		}
		apply(Enqueue.Type, &EnqueueCmd{NS: testNS, Jobs: jobs})
	}
	for range 10 {
		enqueue()
	}
	fetch := &FetchBatchCmd{Fetch: FetchCmd{NS: testNS, Queues: []string{"bench"}, WorkerID: "w", LeaseNs: int64(time.Minute)}, Max: 100}
	items := make([]AckBatchItem, 0, 100)
	b.ReportAllocs()
	b.ResetTimer()
	for n := 0; n < b.N; n += 100 {
		enqueue()
		got := apply(FetchBatch.Type, fetch).([]*job.Job)
		items = items[:0]
		for _, j := range got {
			items = append(items, AckBatchItem{ID: j.ID})
		}
		for _, o := range apply(AckBatch.Type, &AckBatchCmd{NS: testNS, WorkerID: "w", Items: items}).([]AckOutcome) {
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

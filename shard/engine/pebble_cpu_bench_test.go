//go:build unix

package engine

import (
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/pebble"

	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/shard/job"
)

// BenchmarkApplyLifecycleStoreCPU applies the lifecycle of
// BenchmarkApplyLifecycleHistory (enqueue 100, fetch/batch 100, ack/batch
// 100, metered, with queue history) on the node's Pebble options and
// reports what every member pays a job in CPU, Pebble's background
// flushes and compactions included, which ns/op (the apply goroutine's
// wall time) leaves out: cpu-µs/job is the process's CPU over the run,
// and with-compaction-µs/job adds a compaction of everything at the end,
// so that options which put compactions off past the run do not look
// cheaper for it. Run it long enough for several flushes of full-sized
// memtables, e.g. -benchtime 600000x (docs/BENCHMARKS.md, "A follower's
// cost").
func BenchmarkApplyLifecycleStoreCPU(b *testing.B) {
	opts := replica.StateOptions()
	opts.Cache = pebble.NewCache(128 << 20)
	defer opts.Cache.Unref()
	db, err := pebble.Open(b.TempDir(), opts)
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
	apply(UsageSweep.Type, &UsageSweepCmd{})
	apply(HistoryStart.Type, &HistoryStartCmd{})
	seq := 0
	enqueue := func() {
		jobs := make([][]byte, 100)
		for i := range jobs {
			seq++
			j := &job.Job{ID: fmt.Sprintf("job_%026d", seq), Queue: "bench", Payload: []byte(`{"n":1}`), MaxRetries: 3,
				Backoff: job.BackoffExponential, BaseDelay: int64(time.Second), MaxDelay: int64(time.Minute)}
			jobs[i] = j.Encode()
		}
		apply(Enqueue.Type, &EnqueueCmd{NS: testNS, Jobs: jobs})
	}
	for range 10 {
		enqueue()
	}
	fetch := &FetchBatchCmd{Fetch: FetchCmd{NS: testNS, Queues: []string{"bench"}, WorkerID: "w", LeaseNs: int64(time.Minute)}, Max: 100}
	items := make([]AckBatchItem, 0, 100)
	b.ResetTimer()
	start := processCPU(b)
	for n := 0; n < b.N; n += 100 {
		enqueue()
		got := apply(FetchBatch.Type, fetch).([]*job.Job)
		items = items[:0]
		for _, j := range got {
			items = append(items, AckBatchItem{ID: j.ID})
		}
		apply(AckBatch.Type, &AckBatchCmd{NS: testNS, WorkerID: "w", Items: items})
	}
	run := processCPU(b) - start
	b.StopTimer()
	if err := db.Compact([]byte{0}, []byte{0xff, 0xff, 0xff, 0xff}, false); err != nil {
		b.Fatal(err)
	}
	all := processCPU(b) - start
	b.ReportMetric(float64(run.Nanoseconds())/1e3/float64(b.N), "cpu-µs/job")
	b.ReportMetric(float64(all.Nanoseconds())/1e3/float64(b.N), "with-compaction-µs/job")
}

// processCPU is the CPU time, user and system, the process has used.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

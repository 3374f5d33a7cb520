//go:build unix

package engine

import (
	"fmt"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/pebble"
	"github.com/klauspost/compress/snappy"

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
	benchStoreCPU(b, (*storeLifecycle).run)
}

// BenchmarkApplyRetriedLifecycleStoreCPU is
// BenchmarkApplyLifecycleStoreCPU with one failed attempt a job: enqueued,
// fetched, failed (retrying, a second later), promoted, fetched again and
// acked, a hundred at a time. Run it as that one, e.g. -benchtime
// 300000x.
func BenchmarkApplyRetriedLifecycleStoreCPU(b *testing.B) {
	benchStoreCPU(b, (*storeLifecycle).runRetried)
}

// benchStoreCPU times lifecycle over b.N jobs in a fresh store and
// reports the process's CPU a job, as the two benchmarks above describe.
func benchStoreCPU(b *testing.B, lifecycle func(lc *storeLifecycle, n int)) {
	db, done := benchStore(b)
	defer done()
	lc := newStoreLifecycle(b, db, nil)
	b.ResetTimer()
	start := processCPU(b)
	lifecycle(lc, b.N)
	run := processCPU(b) - start
	b.StopTimer()
	reportStoreCPU(b, db, start, run)
}

// BenchmarkApplyEffectsStoreCPU weighs the other way a member could
// follow the log: applying the Pebble batch the leader built for each
// entry (its effects) instead of running the entry's commands. It applies
// BenchmarkApplyLifecycleStoreCPU's lifecycle once, untimed, keeping each
// group's batch, then commits those batches into a fresh store on the
// same options and reports the process's CPU a job for that, Pebble's
// background work included, as that benchmark does; effect-B/job and
// command-B/job are what an entry would carry a job either way (what the
// Raft log writes and sends). Run it as that one, e.g. -benchtime
// 600000x (docs/BENCHMARKS.md, "Followers applying the leader's
// batches"). The batches are kept compressed with snappy, entry by
// entry, as a log would carry them: the timed apply decompresses each
// first, snappy-effect-B/job is their size and snappy-encode-µs/job the
// time (wall, on one goroutine) the leader would spend compressing them.
func BenchmarkApplyEffectsStoreCPU(b *testing.B) {
	src, doneSrc := benchStore(b)
	var effects [][]byte // each group's batch, compressed
	effectBytes, snappyBytes := 0, 0
	var encode time.Duration
	timed := false // the lifecycle's setup is kept too (the fresh store needs its keys) but not counted
	lc := newStoreLifecycle(b, src, func(repr []byte) {
		t0 := time.Now()
		z := snappy.Encode(nil, repr)
		if timed {
			effectBytes += len(repr)
			encode += time.Since(t0)
			snappyBytes += len(z)
		}
		effects = append(effects, z)
	})
	timed = true
	lc.cmdBytes = 0
	lc.run(b.N)
	doneSrc()
	db, done := benchStore(b)
	defer done()
	b.ResetTimer()
	start := processCPU(b)
	var repr []byte
	for _, z := range effects {
		var err error
		if repr, err = snappy.Decode(repr[:cap(repr)], z); err != nil {
			b.Fatal(err)
		}
		batch := db.NewBatch()
		if err := batch.SetRepr(repr); err != nil {
			b.Fatal(err)
		}
		if err := batch.Commit(pebble.NoSync); err != nil {
			b.Fatal(err)
		}
		if err := batch.Close(); err != nil {
			b.Fatal(err)
		}
	}
	run := processCPU(b) - start
	b.StopTimer()
	reportStoreCPU(b, db, start, run)
	b.ReportMetric(float64(effectBytes)/float64(b.N), "effect-B/job")
	b.ReportMetric(float64(snappyBytes)/float64(b.N), "snappy-effect-B/job")
	b.ReportMetric(float64(encode.Nanoseconds())/1e3/float64(b.N), "snappy-encode-µs/job")
	b.ReportMetric(float64(lc.cmdBytes)/float64(b.N), "command-B/job")
}

// benchStore opens a Pebble store in a temporary folder on the node's
// options; done closes it, failing the benchmark if a flush or compaction
// found a SingleDelete that met two sets or none (store.go, setOnce).
func benchStore(b *testing.B) (*pebble.DB, func()) {
	opts := replica.StateOptions()
	opts.Cache = replica.StateCache(128 << 20) // a node's default
	var twice, none atomic.Int64
	opts.Experimental.SingleDeleteInvariantViolationCallback = func([]byte) { twice.Add(1) }
	opts.Experimental.IneffectualSingleDeleteCallback = func([]byte) { none.Add(1) }
	db, err := pebble.Open(b.TempDir(), opts)
	if err != nil {
		b.Fatal(err)
	}
	return db, func() {
		if err := db.Close(); err != nil {
			b.Fatal(err)
		}
		opts.Cache.Unref()
		if twice.Load() != 0 || none.Load() != 0 {
			b.Fatalf("single deletes that met two sets: %d, that met none: %d", twice.Load(), none.Load())
		}
	}
}

// storeLifecycle applies BenchmarkApplyLifecycleHistory's lifecycle
// (enqueue 100, fetch/batch 100, ack/batch 100, metered, with queue
// history) through replica.Local, counting the command bytes it applies.
type storeLifecycle struct {
	b        *testing.B
	loc      *replica.Local
	now      time.Time
	seq      int
	cmdBytes int
	fetch    *FetchBatchCmd
	items    []AckBatchItem
}

// newStoreLifecycle starts the lifecycle on db with ten batches waiting;
// see, if set, is handed every group's batch from the first.
func newStoreLifecycle(b *testing.B, db *pebble.DB, see func(repr []byte)) *storeLifecycle {
	loc, err := replica.NewLocal(db, New(Options{}).Registry())
	if err != nil {
		b.Fatal(err)
	}
	if see != nil {
		loc.SeeBatches(see)
	}
	lc := &storeLifecycle{b: b, loc: loc, now: time.Unix(1_800_000_000, 0).UTC(),
		fetch: &FetchBatchCmd{Fetch: FetchCmd{NS: testNS, Queues: []string{"bench"}, WorkerID: "w", LeaseNs: int64(time.Minute)}, Max: 100},
		items: make([]AckBatchItem, 0, 100)}
	lc.apply(UsageSweep.Type, &UsageSweepCmd{})
	lc.apply(HistoryStart.Type, &HistoryStartCmd{})
	for range 10 {
		lc.enqueue()
	}
	return lc
}

func (lc *storeLifecycle) apply(t replica.CommandType, c any) any {
	cmd := replica.Encode(c)
	lc.cmdBytes += len(cmd)
	out := lc.loc.Apply(lc.now, replica.Command(t, cmd))[0]
	if out.Err != nil {
		lc.b.Fatal(out.Err)
	}
	lc.now = lc.now.Add(time.Millisecond)
	return out.Value
}

func (lc *storeLifecycle) enqueue() {
	jobs := make([][]byte, 100)
	for i := range jobs {
		lc.seq++
		j := &job.Job{ID: fmt.Sprintf("job_%026d", lc.seq), Queue: "bench", Payload: []byte(`{"n":1}`), MaxRetries: 3,
			Backoff: job.BackoffExponential, BaseDelay: int64(time.Second), MaxDelay: int64(time.Minute)}
		jobs[i] = j.Encode()
	}
	lc.apply(Enqueue.Type, &EnqueueCmd{NS: testNS, Jobs: jobs})
}

// run works n jobs through: enqueued, fetched and acked, a hundred at a time.
func (lc *storeLifecycle) run(n int) {
	for done := 0; done < n; done += 100 {
		lc.enqueue()
		got := lc.apply(FetchBatch.Type, lc.fetch).([]*job.Job)
		lc.items = lc.items[:0]
		for _, j := range got {
			lc.items = append(lc.items, AckBatchItem{ID: j.ID})
		}
		lc.apply(AckBatch.Type, &AckBatchCmd{NS: testNS, WorkerID: "w", Items: lc.items})
	}
}

// runRetried works n jobs through as run does, but for a failed first
// attempt each: the failures in one entry, their retry promoted once due.
func (lc *storeLifecycle) runRetried(n int) {
	fails := make([][]byte, 0, 100)
	ids := make([]string, 0, 100)
	for done := 0; done < n; done += 100 {
		lc.enqueue()
		got := lc.apply(FetchBatch.Type, lc.fetch).([]*job.Job)
		fails, ids = fails[:0], ids[:0]
		for _, j := range got {
			fails = append(fails, Fail.Command(&FailCmd{NS: testNS, ID: j.ID, WorkerID: "w", Error: "boom"}))
			ids = append(ids, j.ID)
		}
		for _, out := range lc.loc.Apply(lc.now, fails...) {
			if out.Err != nil {
				lc.b.Fatal(out.Err)
			}
		}
		lc.now = lc.now.Add(2 * time.Second) // past the first retry's delay (1 s)
		if promoted := lc.apply(Promote.Type, &SweepCmd{NS: testNS, IDs: ids}).(int); promoted != len(ids) {
			lc.b.Fatalf("promoted %d of %d", promoted, len(ids))
		}
		got = lc.apply(FetchBatch.Type, lc.fetch).([]*job.Job)
		lc.items = lc.items[:0]
		for _, j := range got {
			lc.items = append(lc.items, AckBatchItem{ID: j.ID})
		}
		lc.apply(AckBatch.Type, &AckBatchCmd{NS: testNS, WorkerID: "w", Items: lc.items})
	}
}

// reportStoreCPU reports the CPU a job of a run that started at start
// and took run, and, after compacting all of db, the same with the
// compaction.
func reportStoreCPU(b *testing.B, db *pebble.DB, start, run time.Duration) {
	if err := db.Compact([]byte{0}, []byte{0xff, 0xff, 0xff, 0xff}, false); err != nil {
		b.Fatal(err)
	}
	all := processCPU(b) - start
	b.ReportMetric(float64(run.Nanoseconds())/1e3/float64(b.N), "cpu-µs/job")
	b.ReportMetric(float64(all.Nanoseconds())/1e3/float64(b.N), "with-compaction-µs/job")
	// What flushes and compactions wrote, the final compaction included:
	// the work above that scales with the bytes a job leaves in memtables.
	t := db.Metrics().Total()
	b.ReportMetric(float64(t.BytesFlushed)/float64(b.N), "flushed-B/job")
	b.ReportMetric(float64(t.BytesCompacted)/float64(b.N), "compacted-B/job")
}

// processCPU is the CPU time, user and system, the process has used.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

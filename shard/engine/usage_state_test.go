package engine

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand"
	"testing"
	"time"

	"github.com/cockroachdb/pebble"
	"github.com/cockroachdb/pebble/vfs"
	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/shard/job"
	"github.com/jobbie/jobbie/shard/keys"
	"github.com/jobbie/jobbie/wire"
)

// Counts go to the hour of their entry's clock; an attempt's active time
// to the hour it ended in.
func TestUsageHourBoundaries(t *testing.T) {
	f := meterFSM(t)
	h0 := f.now
	f.advance(time.Hour - time.Second)
	id := f.enqueue(&job.Job{Queue: "q"})
	enqueued := f.storedBytes(testNS)
	f.advance(500 * time.Millisecond)
	f.fetch("q")
	leased := f.storedBytes(testNS)
	f.advance(2500 * time.Millisecond)
	require.Equal(t, job.Completed, f.apply(Ack.Type, &AckCmd{NS: testNS, ID: id}))
	h1 := h0.Add(time.Hour)
	require.Equal(t, wire.ShardMeters{JobsEnqueued: 1, Executions: 1, StorageByteMs: enqueued*500 + leased*500}, f.meters(testNS, h0))
	require.Equal(t, wire.ShardMeters{JobsCompleted: 1, ActiveJobMs: 2500, StorageByteMs: leased * 2000}, f.meters(testNS, h1),
		"an attempt's time counts in the hour it ended; the leased record's bytes on both sides of the hour")
}

// Storage integrates bytes × time exactly, split at hour boundaries, by
// the sweep for an idle namespace and at each change for a busy one.
func TestUsageStorageIntegratesAcrossHours(t *testing.T) {
	f := meterFSM(t)
	h0 := f.now
	f.advance(59 * time.Minute)
	id := f.enqueue(&job.Job{Queue: "q", Payload: make([]byte, 300)})
	s := f.storedBytes(testNS)
	f.advance(90 * time.Minute) // idle: nothing but the sweep
	f.apply(UsageSweep.Type, &UsageSweepCmd{})
	require.Equal(t, s*60_000, f.meters(testNS, h0).StorageByteMs)
	require.Equal(t, s*3_600_000, f.meters(testNS, h0.Add(time.Hour)).StorageByteMs)
	h2 := h0.Add(2 * time.Hour)
	require.Equal(t, s*29*60_000, f.meters(testNS, h2).StorageByteMs)

	// A change integrates up to itself, then the new size accrues.
	f.advance(10 * time.Second)
	f.fetch("q")
	s1 := f.storedBytes(testNS)
	require.Equal(t, f.job(id).Stored, s1)
	f.advance(5 * time.Second)
	f.apply(UsageSweep.Type, &UsageSweepCmd{})
	require.Equal(t, s*(29*60_000+10_000)+s1*5_000, f.meters(testNS, h2).StorageByteMs)
	// A sweep at the same clock adds nothing; nor does a namespace with nothing stored.
	f.apply(UsageSweep.Type, &UsageSweepCmd{})
	require.Equal(t, s*(29*60_000+10_000)+s1*5_000, f.meters(testNS, h2).StorageByteMs)
}

// Metering starts with the first usage sweep: before it, commands write
// exactly what they wrote before metering existed (so older logs replay
// as they first applied); a job written before counts from its next write.
func TestUsageStartsWithTheFirstSweep(t *testing.T) {
	f := setupFSM(t)
	require.False(t, f.e.Metering(f.db))
	old := f.enqueue(&job.Job{Queue: "q"})
	gone := f.enqueue(&job.Job{Queue: "q"})
	require.Zero(t, f.job(old).Stored)
	require.Empty(t, usageKeys(t, f.db), "no usage state before metering")

	f.advance(time.Second)
	f.apply(UsageSweep.Type, &UsageSweepCmd{})
	require.True(t, f.e.Metering(f.db))
	require.Zero(t, f.storedBytes(testNS), "records written before count nothing yet")
	require.Equal(t, old, f.fetch("q").ID)
	require.Equal(t, f.job(old).Stored, f.storedBytes(testNS), "a rewrite counts the record")
	require.Nil(t, f.apply(JobDiscard.Type, &JobOpCmd{NS: testNS, ID: gone}))
	require.Equal(t, f.job(old).Stored, f.storedBytes(testNS), "deleting a record that counted nothing takes nothing")
	require.Equal(t, wire.ShardMeters{Executions: 1}, withoutStorage(f.meters(testNS, f.now)),
		"created before metering: not an enqueue of this hour")
}

// usageKeys lists the keys of usage state in r (01 'G', 'M', 'U').
func usageKeys(t *testing.T, r pebble.Reader) [][]byte {
	it, err := r.NewIter(&pebble.IterOptions{LowerBound: []byte{0x01, 'G'}, UpperBound: []byte{0x01, 'V'}})
	require.NoError(t, err)
	defer it.Close()
	var out [][]byte
	for ok := it.First(); ok; ok = it.Next() {
		if bytes.Equal(it.Key(), keys.EventLogStart()) {
			continue // the event log's, in the same range of shard-wide kinds
		}
		out = append(out, append([]byte(nil), it.Key()...))
	}
	return out
}

// The usage sweep prunes hours older than UsageRetention, and storage is
// never integrated into them, however long a namespace sat idle.
func TestUsageSweepPrunesOldHours(t *testing.T) {
	f := meterFSM(t)
	h0 := f.now
	f.enqueue(&job.Job{Queue: "q"})
	f.advance(time.Hour)
	f.apply(UsageSweep.Type, &UsageSweepCmd{})
	require.Len(t, usageOf(t, f.db), 1)
	f.advance(UsageRetention)
	f.apply(UsageSweep.Type, &UsageSweepCmd{})
	bs := usageOf(t, f.db)
	require.Equal(t, h0.Add(time.Hour), bs[0].Hour, "the first hour is past the retention")
	require.Len(t, bs, 40*24)
	f.advance(time.Hour)
	f.apply(UsageSweep.Type, &UsageSweepCmd{})
	bs = usageOf(t, f.db)
	require.Equal(t, h0.Add(2*time.Hour), bs[0].Hour)
	require.Len(t, bs, 40*24)
}

// applied_at is the clock of the last entry that changed usage, held back
// to the last sweep once an hour ended that the sweep has not closed.
func TestUsageAppliedAt(t *testing.T) {
	f := setupFSM(t)
	require.True(t, f.e.UsageAppliedAt(f.db).IsZero(), "zero while the shard does not meter")
	h0 := f.now
	f.apply(UsageSweep.Type, &UsageSweepCmd{})
	require.Equal(t, h0, f.e.UsageAppliedAt(f.db))
	f.advance(10 * time.Minute)
	f.enqueue(&job.Job{Queue: "q"})
	require.Equal(t, f.now, f.e.UsageAppliedAt(f.db))
	f.advance(55 * time.Minute)
	f.enqueue(&job.Job{Queue: "q"})
	require.Equal(t, h0, f.e.UsageAppliedAt(f.db), "the first hour ended, and only a sweep integrates every namespace through it")
	f.apply(UsageSweep.Type, &UsageSweepCmd{})
	require.Equal(t, f.now, f.e.UsageAppliedAt(f.db))
}

// freshDB is an in-memory Pebble closed with the test.
func freshDB(t *testing.T) *pebble.DB {
	db, err := pebble.Open("", &pebble.Options{FS: vfs.NewMem()})
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	return db
}

// applyGrouped applies log to a fresh engine the way a replica does when
// Raft hands it several entries at once: random runs of entries share one
// Pebble batch and commit together.
func applyGrouped(t *testing.T, log []entry, seed int64) *pebble.DB {
	db := freshDB(t)
	reg := newScriptEngine().Registry()
	rng := rand.New(rand.NewSource(seed))
	for i := 0; i < len(log); {
		n := min(1+rng.Intn(6), len(log)-i)
		b := db.NewIndexedBatch()
		var txs []*replica.Tx
		for k, e := range log[i : i+n] {
			tx := replica.NewTx(b, e.now, uint64(i+k+1))
			for _, c := range e.cmds {
				count := b.Count()
				if _, err := reg.Apply(tx, c); err != nil {
					require.Equal(t, count, b.Count(), "a refused command wrote")
				}
			}
			txs = append(txs, tx)
		}
		for _, tx := range txs {
			tx.RunBeforeCommit()
		}
		require.NoError(t, b.Commit(pebble.NoSync))
		require.NoError(t, b.Close())
		for _, tx := range txs {
			tx.RunAfterCommit()
		}
		i += n
	}
	return db
}

// dump is every key and value of db, for comparing two states byte for
// byte.
func dump(t *testing.T, db *pebble.DB) []byte {
	t.Helper()
	var buf bytes.Buffer
	it, err := db.NewIter(nil)
	require.NoError(t, err)
	for it.First(); it.Valid(); it.Next() {
		fmt.Fprintf(&buf, "%x=%x\n", it.Key(), it.Value())
	}
	require.NoError(t, it.Close())
	return buf.Bytes()
}

// Meters gather in memory per batch, but every change is made at its own
// entry's clock: how entries are grouped into batches (which differs
// between a leader and its followers) never changes the state.
func TestUsageIndependentOfBatching(t *testing.T) {
	t.Parallel()
	for seed := int64(1); seed <= 3; seed++ {
		log, _ := makeScript(seed, 400)
		one := replay(t, log)
		require.Equal(t, string(one), string(dump(t, applyGrouped(t, log, seed))), "seed %d", seed)
	}
}

// Under random logs of every command, each namespace's gauge is the sum of
// its job records' sizes, every meter moves, and none goes negative.
func TestUsageOfRandomLogs(t *testing.T) {
	t.Parallel()
	for seed := int64(1); seed <= 3; seed++ {
		log, _ := makeScript(seed, 400)
		db := applyGrouped(t, log, 0)
		for _, ns := range []string{testNS, otherNS} {
			sum := int64(0)
			p := keys.Job(ns, "")
			it, err := db.NewIter(&pebble.IterOptions{LowerBound: p, UpperBound: keys.PrefixEnd(p)})
			require.NoError(t, err)
			for ok := it.First(); ok; ok = it.Next() {
				var j job.Job
				require.NoError(t, j.Decode(it.Value()))
				require.Equal(t, int64(len(it.Key())+len(it.Value())-varintLen(j.Stored)), j.Stored, "seed %d: %s", seed, j.ID)
				sum += j.Stored
			}
			require.NoError(t, it.Close())
			var gauge int64
			if v, closer, err := db.Get(keys.UsageGauge(ns)); err == nil {
				gauge, _ = decodePair(v)
				closer.Close()
			}
			require.Equal(t, sum, gauge, "seed %d: %s's stored bytes", seed, ns)
		}
		var total wire.ShardMeters
		hours := map[time.Time]bool{}
		for _, b := range usageOf(t, db) {
			hours[b.Hour] = true
			m := b.Meters
			for _, v := range []int64{m.JobsEnqueued, m.Executions, m.JobsCompleted, m.JobsFailed, m.JobsDead, m.ActiveJobMs, m.StorageByteMs} {
				require.GreaterOrEqual(t, v, int64(0), "seed %d: %+v", seed, b)
			}
			total.JobsEnqueued += m.JobsEnqueued
			total.Executions += m.Executions
			total.JobsCompleted += m.JobsCompleted
			total.JobsFailed += m.JobsFailed
			total.JobsDead += m.JobsDead
			total.ActiveJobMs += m.ActiveJobMs
			total.StorageByteMs += m.StorageByteMs
		}
		require.Len(t, hours, 2, "seed %d: the script crosses an hour", seed)
		for name, v := range map[string]int64{"enqueued": total.JobsEnqueued, "executions": total.Executions, "completed": total.JobsCompleted,
			"failed": total.JobsFailed, "dead": total.JobsDead, "active": total.ActiveJobMs, "storage": total.StorageByteMs} {
			require.Positive(t, v, "seed %d: %s never metered", seed, name)
		}
	}
}

func varintLen(v int64) int {
	if v == 0 {
		return 0 // not written
	}
	return len(binary.AppendVarint(nil, v))
}

// A log without usage sweeps (every log written before metering) leaves no
// usage state, and records as they were.
func TestUnmeteredLogsWriteNoUsage(t *testing.T) {
	t.Parallel()
	// Several seeds: whether one script's last entries leave jobs (a purge
	// may come late) depends on the makers the script has.
	jobs := 0
	for seed := int64(1); seed <= 3; seed++ {
		log, _ := makeScript(seed, 400)
		for i := range log {
			cmds := log[i].cmds[:0:0]
			for _, c := range log[i].cmds {
				if replica.CommandType(c[0]) != UsageSweep.Type {
					cmds = append(cmds, c)
				}
			}
			log[i].cmds = cmds
		}
		db := applyGrouped(t, log, 0)
		require.Empty(t, usageKeys(t, db), "seed %d", seed)
		it, err := db.NewIter(nil)
		require.NoError(t, err)
		for ok := it.First(); ok; ok = it.Next() {
			if k := it.Key(); len(k) > 2+keys.JobIDLen && bytes.HasPrefix(k[len(k)-keys.JobIDLen-2:], []byte{0, keys.KindJob}) {
				var j job.Job
				require.NoError(t, j.Decode(it.Value()))
				require.Zero(t, j.Stored, "seed %d", seed)
				jobs++
			}
		}
		require.NoError(t, it.Close())
	}
	require.Positive(t, jobs)
}

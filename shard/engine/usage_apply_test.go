package engine

import (
	"testing"
	"time"

	"github.com/cockroachdb/pebble"
	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/shard/job"
	"github.com/jobbie/jobbie/shard/keys"
	"github.com/jobbie/jobbie/wire"
)

// meterFSM is an fsmBundle whose first entry starts usage metering, at
// the start of an hour (setupFSM's clock is one).
func meterFSM(t *testing.T) *fsmBundle {
	f := setupFSM(t)
	f.apply(UsageSweep.Type, &UsageSweepCmd{})
	return f
}

// meters is ns's meters in the hour of at.
func (f *fsmBundle) meters(ns string, at time.Time) wire.ShardMeters {
	f.t.Helper()
	for _, b := range usageOf(f.t, f.db) {
		if b.Namespace == ns && b.Hour.Equal(at.Truncate(time.Hour)) {
			return b.Meters
		}
	}
	return wire.ShardMeters{}
}

func usageOf(t *testing.T, r pebble.Reader) []wire.UsageBucket {
	out, next := UsageBuckets(r, keys.UsageBucketPrefix(), 1_000_000)
	require.Nil(t, next)
	return out
}

// storedBytes is ns's stored-bytes gauge as committed (0 without a record).
func (f *fsmBundle) storedBytes(ns string) int64 {
	v, closer, err := f.db.Get(keys.UsageGauge(ns))
	if err != nil {
		return 0
	}
	defer closer.Close()
	b, _ := decodePair(v)
	return b
}

// encodedJob is the raw record of a job.
func (f *fsmBundle) encodedJob(id string) []byte {
	v, closer, err := f.db.Get(keys.Job(testNS, id))
	require.NoError(f.t, err)
	defer closer.Close()
	return append([]byte(nil), v...)
}

func TestUsageCountsEveryJobCreatedOnce(t *testing.T) {
	f := meterFSM(t)
	f.enqueue(&job.Job{Queue: "q"})
	var batch [][]byte
	for range 3 {
		batch = append(batch, (&job.Job{ID: f.e.newIDForTest(), Queue: "q", Backoff: job.BackoffFixed}).Encode())
	}
	f.apply(Enqueue.Type, &EnqueueCmd{NS: testNS, Jobs: batch})
	u := f.enqueue(&job.Job{Queue: "q", UniqueKey: "k"})
	res := f.apply(Enqueue.Type, &EnqueueCmd{NS: testNS, Jobs: [][]byte{(&job.Job{ID: f.e.newIDForTest(), Queue: "q", UniqueKey: "k"}).Encode()}}).([]EnqueueResult)
	require.True(t, res[0].Existing)
	require.Equal(t, u, res[0].JobID)
	require.Equal(t, wire.ShardMeters{JobsEnqueued: 5}, withoutStorage(f.meters(testNS, f.now)),
		"one, a batch of three, a unique job; its duplicate is not a new job")
}

func withoutStorage(m wire.ShardMeters) wire.ShardMeters {
	m.StorageByteMs = 0
	return m
}

func TestUsageAttemptThatCompletes(t *testing.T) {
	f := meterFSM(t)
	id := f.enqueue(&job.Job{Queue: "q"})
	f.advance(time.Second)
	require.Equal(t, id, f.fetch("q").ID)
	require.Equal(t, wire.ShardMeters{JobsEnqueued: 1, Executions: 1}, withoutStorage(f.meters(testNS, f.now)))
	f.advance(1500 * time.Millisecond)
	require.Equal(t, job.Completed, f.apply(Ack.Type, &AckCmd{NS: testNS, ID: id}))
	require.Equal(t, wire.ShardMeters{JobsEnqueued: 1, Executions: 1, JobsCompleted: 1, ActiveJobMs: 1500},
		withoutStorage(f.meters(testNS, f.now)))
	// A refused ack counts nothing.
	require.Error(t, f.apply(Ack.Type, &AckCmd{NS: testNS, ID: id}).(error))
	require.EqualValues(t, 1, f.meters(testNS, f.now).JobsCompleted)
}

func TestUsageFailWithRetryThenToDead(t *testing.T) {
	f := meterFSM(t)
	id := f.enqueue(&job.Job{Queue: "q", MaxRetries: 1})
	f.fetch("q")
	f.advance(200 * time.Millisecond)
	out := f.apply(Fail.Type, &FailCmd{NS: testNS, ID: id, Error: "boom"}).(*FailOutcome)
	require.Equal(t, job.Retrying, out.State)
	require.Equal(t, wire.ShardMeters{JobsEnqueued: 1, Executions: 1, JobsFailed: 1, ActiveJobMs: 200},
		withoutStorage(f.meters(testNS, f.now)))
	f.advance(2 * time.Second)
	f.apply(Promote.Type, &SweepCmd{NS: testNS, IDs: []string{id}})
	f.fetch("q")
	f.advance(300 * time.Millisecond)
	out = f.apply(Fail.Type, &FailCmd{NS: testNS, ID: id, Error: "again"}).(*FailOutcome)
	require.Equal(t, job.Dead, out.State)
	require.Equal(t, wire.ShardMeters{JobsEnqueued: 1, Executions: 2, JobsFailed: 2, JobsDead: 1, ActiveJobMs: 500},
		withoutStorage(f.meters(testNS, f.now)))
}

func TestUsageLeaseExpiry(t *testing.T) {
	f := meterFSM(t)
	retry := f.enqueue(&job.Job{Queue: "q", MaxRetries: 1})
	last := f.enqueue(&job.Job{Queue: "q"})
	f.fetch("q")
	f.fetch("q")
	f.advance(11 * time.Second) // the 10 s leases ran out
	require.Equal(t, 0, f.apply(ReclaimCounted.Type, &SweepCmd{NS: testNS, IDs: []string{"job_00000000000000000000999999"}}))
	require.Equal(t, 2, f.apply(ReclaimCounted.Type, &SweepCmd{NS: testNS, IDs: []string{retry, last}}))
	require.Equal(t, job.Pending, f.job(retry).State)
	require.Equal(t, job.Dead, f.job(last).State)
	require.Equal(t, wire.ShardMeters{JobsEnqueued: 2, Executions: 2, JobsFailed: 2, JobsDead: 1, ActiveJobMs: 22_000},
		withoutStorage(f.meters(testNS, f.now)))
}

// Cancelling an active job only marks it; its attempt ends, and counts,
// when its worker acks or fails it or its lease runs out.
func TestUsageCancelOfAnActiveJob(t *testing.T) {
	f := meterFSM(t)
	acked := f.enqueue(&job.Job{Queue: "q"})
	failed := f.enqueue(&job.Job{Queue: "q", MaxRetries: 3})
	f.fetch("q")
	f.fetch("q")
	f.advance(700 * time.Millisecond)
	for _, id := range []string{acked, failed} {
		require.Equal(t, wire.CancelRequested, f.apply(JobCancel.Type, &JobOpCmd{NS: testNS, ID: id}))
	}
	require.Equal(t, wire.ShardMeters{JobsEnqueued: 2, Executions: 2}, withoutStorage(f.meters(testNS, f.now)))
	f.advance(300 * time.Millisecond)
	require.Equal(t, job.Cancelled, f.apply(Ack.Type, &AckCmd{NS: testNS, ID: acked}))
	require.Equal(t, job.Cancelled, f.apply(Fail.Type, &FailCmd{NS: testNS, ID: failed, Error: "x"}).(*FailOutcome).State)
	require.Equal(t, wire.ShardMeters{JobsEnqueued: 2, Executions: 2, JobsFailed: 1, ActiveJobMs: 2000},
		withoutStorage(f.meters(testNS, f.now)), "a cancelled job is not completed; a failed call is a failed attempt")
}

// A lease released before its worker had the job takes its execution
// back when it is released in the hour it started; later, its hour may
// already have been read, so it stays counted.
func TestUsageReleasedLease(t *testing.T) {
	f := meterFSM(t)
	id := f.enqueue(&job.Job{Queue: "q"})
	f.fetch("q")
	f.advance(50 * time.Millisecond)
	require.Equal(t, []bool{true}, f.apply(Release.Type, &ReleaseCmd{NS: testNS, WorkerID: "w", Jobs: []ReleaseItem{{ID: id, Attempt: 1}}}))
	require.Equal(t, wire.ShardMeters{JobsEnqueued: 1}, withoutStorage(f.meters(testNS, f.now)))

	f.advance(time.Hour - 50*time.Millisecond - time.Second) // a second before the next hour
	first := f.now
	f.fetch("q")
	f.advance(2 * time.Second)
	require.Equal(t, []bool{true}, f.apply(Release.Type, &ReleaseCmd{NS: testNS, WorkerID: "w", Jobs: []ReleaseItem{{ID: id, Attempt: 1}}}))
	require.Equal(t, wire.ShardMeters{JobsEnqueued: 1, Executions: 1}, withoutStorage(f.meters(testNS, first)))
	require.Equal(t, wire.ShardMeters{ActiveJobMs: 2000}, withoutStorage(f.meters(testNS, f.now)))
}

// A job deleted while active (its queue deleted) ends its attempt too.
func TestUsageRemovedWhileActive(t *testing.T) {
	f := meterFSM(t)
	f.enqueue(&job.Job{Queue: "q"})
	f.fetch("q")
	f.advance(400 * time.Millisecond)
	step := f.apply(QueueDeleteSettle.Type, &QueueSweepCmd{NS: testNS, Queue: "q"}).(*QueueStep)
	require.Equal(t, 1, step.Removed)
	require.Equal(t, wire.ShardMeters{JobsEnqueued: 1, Executions: 1, ActiveJobMs: 400}, withoutStorage(f.meters(testNS, f.now)))
	require.Zero(t, f.storedBytes(testNS))
}

// The stored-bytes gauge is the sum of the namespace's job records (key
// and fields), follows every write and delete, and integrates exactly.
func TestUsageStoredBytes(t *testing.T) {
	f := meterFSM(t)
	id := f.enqueue(&job.Job{Queue: "q", Payload: make([]byte, 1000)})
	s := f.job(id).Stored
	require.Equal(t, int64(len(keys.Job(testNS, id))+len(f.encodedJob(id))-2), s, "key and fields; the 2-byte varint of Stored is not counted")
	require.Equal(t, s, f.storedBytes(testNS))
	other := f.enqueue(&job.Job{Queue: "q"})
	s2 := f.job(other).Stored
	require.Equal(t, s+s2, f.storedBytes(testNS))

	f.advance(2 * time.Second)
	f.fetch("q") // a rewrite: the gauge follows the record's new size
	s1 := f.job(id).Stored
	require.Greater(t, s1, s, "the lease's fields and timeline")
	require.Equal(t, s1+s2, f.storedBytes(testNS))
	f.advance(3 * time.Second)
	require.Equal(t, job.Completed, f.apply(Ack.Type, &AckCmd{NS: testNS, ID: id}))
	sa := f.job(id).Stored
	f.advance(time.Second)
	require.Nil(t, f.apply(JobDiscard.Type, &JobOpCmd{NS: testNS, ID: id}))
	require.Equal(t, s2, f.storedBytes(testNS), "a deleted job's bytes go")
	f.advance(time.Second)
	require.Nil(t, f.apply(JobDiscard.Type, &JobOpCmd{NS: testNS, ID: other}))
	require.Zero(t, f.storedBytes(testNS))
	_, _, err := f.db.Get(keys.UsageGauge(testNS))
	require.ErrorIs(t, err, pebble.ErrNotFound, "an empty namespace keeps no gauge")

	// 2 s of both as enqueued, 3 s with id leased, 1 s with id acked, 1 s of other alone.
	require.Equal(t, (s+s2)*2000+(s1+s2)*3000+(sa+s2)*1000+s2*1000, f.meters(testNS, f.now).StorageByteMs)
}

package engine

import (
	"bytes"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble"
	"github.com/cockroachdb/pebble/vfs"
	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/shard/job"
	"github.com/jobbie/jobbie/shard/keys"
	"github.com/jobbie/jobbie/wire"
)

const testNS = "t_01hx0000000000000000000000/default"

// fsmBundle applies commands straight to an in-memory Pebble, without Raft
// but through the replica's own group apply (replica.Local), to test each
// command's apply in isolation.
type fsmBundle struct {
	t   *testing.T
	e   *Engine
	loc *replica.Local
	db  *pebble.DB
	now time.Time
}

func setupFSM(t *testing.T) *fsmBundle {
	t.Helper()
	db, err := pebble.Open("", &pebble.Options{FS: vfs.NewMem()})
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	e := New(Options{})
	loc, err := replica.NewLocal(db, e.Registry())
	require.NoError(t, err)
	f := &fsmBundle{t: t, e: e, loc: loc, db: db, now: time.Unix(1_800_000_000, 0).UTC()}
	t.Cleanup(func() { require.Zero(t, loc.Redos(), "a refused command wrote before refusing") })
	return f
}

// apply applies one command as its own entry and returns its result, or
// the error that refused it; a command that answers nothing gives nil.
func (f *fsmBundle) apply(t replica.CommandType, c any) any {
	f.t.Helper()
	out := f.loc.Apply(f.now, replica.Command(t, replica.Encode(c)))[0]
	switch {
	case out.Err != nil:
		return out.Err
	case out.Value == replica.None{}:
		return nil
	}
	return out.Value
}

func (f *fsmBundle) has(k []byte) bool {
	_, closer, err := f.db.Get(k)
	if err != nil {
		return false
	}
	closer.Close()
	return true
}

func (f *fsmBundle) advance(d time.Duration) { f.now = f.now.Add(d) }

func (f *fsmBundle) job(id string) *job.Job {
	f.t.Helper()
	j, err := ReadJob(f.db, testNS, id)
	require.NoError(f.t, err)
	return j
}

func (f *fsmBundle) enqueue(j *job.Job) string {
	f.t.Helper()
	if j.ID == "" {
		j.ID = f.e.newIDForTest()
	}
	if j.Backoff == "" {
		j.Backoff, j.BaseDelay, j.MaxDelay = job.BackoffFixed, int64(time.Second), int64(time.Minute)
	}
	res := f.apply(Enqueue.Type, &EnqueueCmd{NS: testNS, Jobs: [][]byte{j.Encode()}}).([]EnqueueResult)
	return res[0].JobID
}

// idSeq numbers test jobs; parallel tests share it.
var idSeq atomic.Int64

func (e *Engine) newIDForTest() string {
	seq := int(idSeq.Add(1))
	id := []byte("job_00000000000000000000000000")
	for i, n := len(id)-1, seq; n > 0; i, n = i-1, n/10 {
		id[i] = byte('0' + n%10)
	}
	return string(id)
}

func (f *fsmBundle) fetch(queues ...string) *job.Job {
	f.t.Helper()
	return f.apply(Fetch.Type, &FetchCmd{NS: testNS, Queues: queues, WorkerID: "w", LeaseNs: int64(10 * time.Second)}).(*job.Job)
}

func (f *fsmBundle) counts(queue string) []int64 {
	q, _ := ReadQueue(f.db, testNS, queue)
	return q.Counts
}

func TestApplyEnqueue(t *testing.T) {
	f := setupFSM(t)
	id := f.enqueue(&job.Job{Queue: "q"})
	j := f.job(id)
	require.Equal(t, job.Pending, j.State)
	require.Equal(t, f.now.UnixNano(), j.CreatedAt)
	// Scheduled in the future → scheduled, indexed for promotion.
	later := f.enqueue(&job.Job{Queue: "q", ScheduledAt: f.now.Add(time.Minute).UnixNano()})
	require.Equal(t, job.Scheduled, f.job(later).State)
	require.True(t, f.has(keys.Timed(testNS, keys.KindDue, f.job(later).ScheduledAt, later)))
	// TTL stamped from the entry clock.
	ttl := f.enqueue(&job.Job{Queue: "q", ExpireAfter: int64(time.Hour)})
	require.Equal(t, f.now.Add(time.Hour).UnixNano(), f.job(ttl).ExpireAt)
	require.EqualValues(t, 2, f.counts("q")[job.Pending])
	require.EqualValues(t, 1, f.counts("q")[job.Scheduled])
}

func TestApplyEnqueueUnique(t *testing.T) {
	f := setupFSM(t)
	a := f.enqueue(&job.Job{Queue: "q", UniqueKey: "k", UniqueUntil: int64(time.Minute)})
	res := f.apply(Enqueue.Type, &EnqueueCmd{NS: testNS, Jobs: [][]byte{(&job.Job{ID: f.e.newIDForTest(), Queue: "q", UniqueKey: "k"}).Encode()}}).([]EnqueueResult)
	require.True(t, res[0].Existing)
	require.Equal(t, a, res[0].JobID)
	// After the period the lock no longer holds.
	f.advance(2 * time.Minute)
	b := f.enqueue(&job.Job{Queue: "q", UniqueKey: "k"})
	require.NotEqual(t, a, b)
}

func TestApplyFetchOrderAndExpiry(t *testing.T) {
	f := setupFSM(t)
	old := f.enqueue(&job.Job{Queue: "q", ExpireAfter: int64(time.Second)})
	f.advance(time.Millisecond)
	n := f.enqueue(&job.Job{Queue: "q", Priority: job.Normal})
	f.advance(time.Millisecond)
	h := f.enqueue(&job.Job{Queue: "q2", Priority: job.High})
	f.advance(2 * time.Second) // old's TTL passes
	got := f.fetch("q", "q2")
	require.Equal(t, h, got.ID)
	require.Equal(t, 1, got.Attempt)
	require.Equal(t, f.now.Add(10*time.Second).UnixNano(), got.LeaseUntil)
	got = f.fetch("q", "q2")
	require.Equal(t, n, got.ID, "the expired job is skipped")
	require.Equal(t, job.Dead, f.job(old).State)
	require.Equal(t, job.ReasonExpired, f.job(old).DeadReason)
	require.Nil(t, f.fetch("q", "q2"))
}

func TestApplyAckAndFail(t *testing.T) {
	f := setupFSM(t)
	id := f.enqueue(&job.Job{Queue: "q", MaxRetries: 1})
	// Ack of a pending job is a lease mismatch and changes nothing.
	err := f.apply(Ack.Type, &AckCmd{NS: testNS, ID: id})
	require.Equal(t, apierr.LeaseMismatch, apierr.CodeOf(err.(error)))
	f.fetch("q")
	// Wrong worker.
	err = f.apply(Fail.Type, &FailCmd{NS: testNS, ID: id, WorkerID: "other", Error: "x"})
	require.Equal(t, apierr.LeaseMismatch, apierr.CodeOf(err.(error)))
	out := f.apply(Fail.Type, &FailCmd{NS: testNS, ID: id, WorkerID: "w", Error: "boom"}).(*FailOutcome)
	require.Equal(t, job.Retrying, out.State)
	require.GreaterOrEqual(t, out.NextAttempt, f.now.Add(time.Second).UnixNano())
	f.advance(2 * time.Second)
	require.Equal(t, 1, f.apply(Promote.Type, &SweepCmd{NS: testNS, IDs: []string{id}}))
	f.fetch("q")
	out = f.apply(Fail.Type, &FailCmd{NS: testNS, ID: id, Error: "again"}).(*FailOutcome)
	require.Equal(t, job.Dead, out.State)
	require.Len(t, f.job(id).Errors, 2)

	ok := f.enqueue(&job.Job{Queue: "q"})
	f.fetch("q")
	require.Equal(t, job.Completed, f.apply(Ack.Type, &AckCmd{NS: testNS, ID: ok, Result: []byte(`{"r":1}`)}))
	require.Equal(t, job.Completed, f.job(ok).State)
	require.JSONEq(t, `{"r":1}`, string(f.job(ok).Result))
	require.EqualValues(t, []int64{0, 0, 0, 0, 1, 0, 1, 0}, f.counts("q"))
}

func TestApplyHeartbeatReclaimExpire(t *testing.T) {
	f := setupFSM(t)
	id := f.enqueue(&job.Job{Queue: "q"})
	f.fetch("q")
	f.advance(5 * time.Second)
	st := f.apply(Heartbeat.Type, &HeartbeatCmd{NS: testNS, Jobs: []HeartbeatItem{{ID: id, Checkpoint: []byte(`{"o":1}`)}, {ID: "job_nope"}}}).([]string)
	require.Equal(t, []string{wire.HeartbeatOK, wire.HeartbeatLost}, st)
	require.Equal(t, f.now.Add(10*time.Second).UnixNano(), f.job(id).LeaseUntil)
	// A reclaim before the lease ends changes nothing; after, it returns the job.
	require.Equal(t, 0, f.apply(Reclaim.Type, &SweepCmd{NS: testNS, IDs: []string{id}}))
	f.advance(11 * time.Second)
	require.Equal(t, 1, f.apply(Reclaim.Type, &SweepCmd{NS: testNS, IDs: []string{id}}))
	j := f.job(id)
	require.Equal(t, job.Pending, j.State)
	require.JSONEq(t, `{"o":1}`, string(j.Checkpoint))
	require.Len(t, j.Errors, 1)

	ttl := f.enqueue(&job.Job{Queue: "q", ExpireAfter: int64(time.Second)})
	require.Equal(t, 0, f.apply(Expire.Type, &SweepCmd{NS: testNS, IDs: []string{ttl}}))
	f.advance(time.Second)
	require.Equal(t, 1, f.apply(Expire.Type, &SweepCmd{NS: testNS, IDs: []string{ttl}}))
	require.Equal(t, job.Dead, f.job(ttl).State)
}

// Two replicas applying the same commands end with identical bytes.
func TestApplyIsDeterministic(t *testing.T) {
	run := func() []byte {
		idSeq.Store(0)
		f := setupFSM(t)
		a := f.enqueue(&job.Job{Queue: "q", UniqueKey: "u", ExpireAfter: int64(time.Minute)})
		f.enqueue(&job.Job{Queue: "q", Priority: job.Critical})
		f.fetch("q")
		f.advance(time.Second)
		f.fetch("q")
		f.apply(Fail.Type, &FailCmd{NS: testNS, ID: a, Error: "x"})
		var buf bytes.Buffer
		it, err := f.db.NewIter(nil)
		require.NoError(t, err)
		for it.First(); it.Valid(); it.Next() {
			buf.Write(it.Key())
			buf.Write(it.Value())
		}
		require.NoError(t, it.Close())
		return buf.Bytes()
	}
	require.Equal(t, run(), run())
}

package engine

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/shard/job"
	"github.com/jobbie/jobbie/shard/keys"
	"github.com/jobbie/jobbie/wire"
)

func (f *fsmBundle) jobOp(typ replica.CommandType, id string, queue ...string) any {
	f.t.Helper()
	c := &JobOpCmd{NS: testNS, ID: id}
	if len(queue) > 0 {
		c.Queue = queue[0]
	}
	return f.apply(typ, c)
}

func requireCode(t *testing.T, res any, code apierr.Code) {
	t.Helper()
	err, ok := res.(error)
	require.True(t, ok, "want an error, got %v", res)
	require.Equal(t, code, apierr.CodeOf(err))
}

func events(j *job.Job) []string {
	var out []string
	for _, e := range j.Timeline {
		out = append(out, e.Kind.String())
	}
	return out
}

func TestApplyCancelWaitingJobs(t *testing.T) {
	f := setupFSM(t)
	p := f.enqueue(&job.Job{Queue: "q", UniqueKey: "u", ExpireAfter: int64(time.Hour)})
	s := f.enqueue(&job.Job{Queue: "q", ScheduledAt: f.now.Add(time.Hour).UnixNano()})
	require.Equal(t, wire.CancelDone, f.jobOp(JobCancel.Type, p))
	require.Equal(t, wire.CancelDone, f.jobOp(JobCancel.Type, s))
	j := f.job(p)
	require.Equal(t, job.Cancelled, j.State)
	require.Equal(t, f.now.UnixNano(), j.CancelledAt)
	require.False(t, f.has(keys.Pending(testNS, "q", uint8(j.Priority), j.CreatedAt, p)))
	require.False(t, f.has(keys.Timed(testNS, keys.KindExpire, j.ExpireAt, p)))
	require.False(t, f.has(keys.Unique(testNS, "q", "u")), "the unique lock is released")
	require.False(t, f.has(keys.Timed(testNS, keys.KindDue, f.job(s).ScheduledAt, s)))
	require.True(t, f.has(keys.Timed(testNS, keys.KindPrune, j.PruneAt, p)))
	require.Equal(t, f.now.Add(DefaultRetention).UnixNano(), j.PruneAt)
	require.Nil(t, f.fetch("q"))
	require.EqualValues(t, 2, f.counts("q")[job.Cancelled])
	require.Equal(t, []string{"enqueued", "cancelled"}, events(j))
	// A second cancel of a cancelled job conflicts, naming the state.
	res := f.jobOp(JobCancel.Type, p)
	requireCode(t, res, apierr.Conflict)
	require.ErrorContains(t, res.(error), "cancelled")
	requireCode(t, f.jobOp(JobCancel.Type, "job_00000000000000000000000999"), apierr.NotFound)

	// A retrying job is cancelled at once too.
	r := f.enqueue(&job.Job{Queue: "r", MaxRetries: 3})
	f.fetch("r")
	f.apply(Fail.Type, &FailCmd{NS: testNS, ID: r, Error: "x"})
	require.Equal(t, job.Retrying, f.job(r).State)
	require.Equal(t, wire.CancelDone, f.jobOp(JobCancel.Type, r))
	require.False(t, f.has(keys.Timed(testNS, keys.KindDue, f.job(r).NextAttempt, r)))
}

func TestApplyCancelActiveSettlesOnAckFailOrLeaseExpiry(t *testing.T) {
	f := setupFSM(t)
	a := f.enqueue(&job.Job{Queue: "q"})
	b := f.enqueue(&job.Job{Queue: "q", MaxRetries: 5})
	c := f.enqueue(&job.Job{Queue: "q"})
	for range 3 {
		f.fetch("q")
	}
	for _, id := range []string{a, b, c} {
		require.Equal(t, wire.CancelRequested, f.jobOp(JobCancel.Type, id))
		require.Equal(t, job.Active, f.job(id).State, "stays leased")
	}
	f.advance(time.Second)
	require.Equal(t, wire.CancelRequested, f.jobOp(JobCancel.Type, a), "asking again changes nothing")
	require.Equal(t, f.now.Add(-time.Second).UnixNano(), f.job(a).CancelRequestedAt)
	st := f.apply(Heartbeat.Type, &HeartbeatCmd{NS: testNS, Jobs: []HeartbeatItem{{ID: a}, {ID: b}}}).([]string)
	require.Equal(t, []string{wire.HeartbeatCancel, wire.HeartbeatCancel}, st)

	require.Equal(t, job.Cancelled, f.apply(Ack.Type, &AckCmd{NS: testNS, ID: a}))
	require.Equal(t, job.Cancelled, f.job(a).State)
	require.Zero(t, f.job(a).CompletedAt)
	out := f.apply(Fail.Type, &FailCmd{NS: testNS, ID: b, Error: "stopped"}).(*FailOutcome)
	require.Equal(t, job.Cancelled, out.State)
	require.Equal(t, job.Cancelled, f.job(b).State)
	require.Len(t, f.job(b).Errors, 1)
	f.advance(time.Minute)
	require.Equal(t, 1, f.apply(Reclaim.Type, &SweepCmd{NS: testNS, IDs: []string{c}}))
	require.Equal(t, job.Cancelled, f.job(c).State, "a lost lease of a cancelling job cancels it")
	require.Equal(t, []string{"enqueued", "started", "cancel_requested", "cancelled"}, events(f.job(a)))
	require.Equal(t, []string{"enqueued", "started", "cancel_requested", "failed", "cancelled"}, events(f.job(b)))
	require.Equal(t, []string{"enqueued", "started", "cancel_requested", "lease_expired", "cancelled"}, events(f.job(c)))
	require.EqualValues(t, 3, f.counts("q")[job.Cancelled])
	require.Zero(t, f.counts("q")[job.Active])
}

func TestApplyManualRetry(t *testing.T) {
	f := setupFSM(t)
	id := f.enqueue(&job.Job{Queue: "q", MaxRetries: 0, ExpireAfter: int64(time.Hour)})
	requireCode(t, f.jobOp(JobRetry.Type, id), apierr.Conflict)
	f.fetch("q")
	requireCode(t, f.jobOp(JobRetry.Type, id), apierr.Conflict)
	f.apply(Fail.Type, &FailCmd{NS: testNS, ID: id, Error: "boom"})
	j := f.job(id)
	require.Equal(t, job.Dead, j.State)
	require.True(t, f.has(keys.Dead(testNS, "", j.DeadAt, id)))
	require.True(t, f.has(keys.Dead(testNS, "q", j.DeadAt, id)))
	deadAt := j.DeadAt

	f.advance(2 * time.Hour)
	require.Equal(t, job.Pending, f.jobOp(JobRetry.Type, id))
	j = f.job(id)
	require.Equal(t, job.Pending, j.State)
	require.Zero(t, j.Attempt)
	require.Empty(t, j.DeadReason)
	require.Len(t, j.Errors, 1, "the error history is kept")
	require.False(t, f.has(keys.Dead(testNS, "", deadAt, id)))
	require.False(t, f.has(keys.Dead(testNS, "q", deadAt, id)))
	require.Equal(t, f.now.Add(time.Hour).UnixNano(), j.ExpireAt, "the TTL starts again")
	require.True(t, f.has(keys.Timed(testNS, keys.KindExpire, j.ExpireAt, id)))
	got := f.fetch("q")
	require.Equal(t, id, got.ID)
	require.Equal(t, 1, got.Attempt)

	// A completed job can be retried; its prune entry goes away.
	require.Equal(t, job.Completed, f.apply(Ack.Type, &AckCmd{NS: testNS, ID: id}))
	pruneAt := f.job(id).PruneAt
	require.True(t, f.has(keys.Timed(testNS, keys.KindPrune, pruneAt, id)))
	require.Equal(t, job.Pending, f.jobOp(JobRetry.Type, id))
	require.False(t, f.has(keys.Timed(testNS, keys.KindPrune, pruneAt, id)))
	require.Zero(t, f.job(id).PruneAt)
	require.Equal(t, []string{"enqueued", "started", "failed", "dead", "retried", "started", "completed", "retried"}, events(f.job(id)))
	require.EqualValues(t, []int64{0, 0, 1, 0, 0, 0, 0, 0}, f.counts("q"))
}

func TestApplyMove(t *testing.T) {
	f := setupFSM(t)
	p := f.enqueue(&job.Job{Queue: "a", UniqueKey: "u"})
	d := f.enqueue(&job.Job{Queue: "a", MaxRetries: 0})
	x := f.enqueue(&job.Job{Queue: "a"})
	require.Equal(t, job.Pending, f.jobOp(JobMove.Type, p, "b"))
	require.False(t, f.has(keys.Unique(testNS, "a", "u")))
	requireCode(t, f.jobOp(JobMove.Type, p, "b"), apierr.BadRequest)
	// d is fetched from a and dies there; p is fetched from b only.
	require.Equal(t, d, f.fetch("a").ID)
	require.Equal(t, p, f.fetch("b").ID)
	requireCode(t, f.jobOp(JobMove.Type, p, "c"), apierr.Conflict)
	f.apply(Fail.Type, &FailCmd{NS: testNS, ID: d, Error: "boom"})
	require.Equal(t, job.Dead, f.jobOp(JobMove.Type, d, "c"))
	j := f.job(d)
	require.Equal(t, "c", j.Queue)
	require.False(t, f.has(keys.Dead(testNS, "a", j.DeadAt, d)))
	require.True(t, f.has(keys.Dead(testNS, "c", j.DeadAt, d)))
	require.True(t, f.has(keys.Dead(testNS, "", j.DeadAt, d)))
	require.Equal(t, "moved", events(j)[len(j.Timeline)-1])
	require.Equal(t, "a → c", j.Timeline[len(j.Timeline)-1].Detail)
	require.EqualValues(t, []int64{0, 0, 1, 0, 0, 0, 0, 0}, f.counts("a"), "only x is left in a")
	require.EqualValues(t, []int64{0, 0, 0, 1, 0, 0, 0, 0}, f.counts("b"))
	require.EqualValues(t, []int64{0, 0, 0, 0, 0, 0, 1, 0}, f.counts("c"))
	require.Equal(t, x, f.fetch("a").ID)
}

func TestApplyDelete(t *testing.T) {
	f := setupFSM(t)
	p := f.enqueue(&job.Job{Queue: "q", UniqueKey: "u", ExpireAfter: int64(time.Hour)})
	s := f.enqueue(&job.Job{Queue: "q", ScheduledAt: f.now.Add(time.Hour).UnixNano()})
	a := f.enqueue(&job.Job{Queue: "q2"})
	d := f.enqueue(&job.Job{Queue: "q2", MaxRetries: 0})
	f.fetch("q2")
	f.fetch("q2")
	f.apply(Fail.Type, &FailCmd{NS: testNS, ID: d, Error: "boom"})
	requireCode(t, f.jobOp(JobDelete.Type, a), apierr.Conflict)
	pj, sj, dj := f.job(p), f.job(s), f.job(d)
	for _, id := range []string{p, s, d} {
		require.Nil(t, f.jobOp(JobDelete.Type, id))
		requireCode(t, f.jobOp(JobDelete.Type, id), apierr.NotFound)
	}
	for _, k := range [][]byte{
		keys.Pending(testNS, "q", uint8(pj.Priority), pj.CreatedAt, p), keys.Timed(testNS, keys.KindExpire, pj.ExpireAt, p),
		keys.Unique(testNS, "q", "u"), keys.Timed(testNS, keys.KindDue, sj.ScheduledAt, s),
		keys.Dead(testNS, "", dj.DeadAt, d), keys.Dead(testNS, "q2", dj.DeadAt, d), keys.Job(testNS, p),
	} {
		require.False(t, f.has(k), "%q", k)
	}
	require.Nil(t, f.fetch("q"))
	require.EqualValues(t, []int64{0, 0, 0, 0, 0, 0, 0, 0}, f.counts("q"))
	require.EqualValues(t, []int64{0, 0, 0, 1, 0, 0, 0, 0}, f.counts("q2"))
}

func TestApplyPrune(t *testing.T) {
	f := setupFSM(t)
	c := f.enqueue(&job.Job{Queue: "q"})
	d := f.enqueue(&job.Job{Queue: "q", MaxRetries: 0})
	x := f.enqueue(&job.Job{Queue: "q"})
	f.fetch("q")
	f.fetch("q")
	f.apply(Ack.Type, &AckCmd{NS: testNS, ID: c})
	f.apply(Fail.Type, &FailCmd{NS: testNS, ID: d, Error: "boom"})
	f.jobOp(JobCancel.Type, x)
	ids := []string{c, d, x}
	require.Equal(t, 0, f.apply(JobPrune.Type, &SweepCmd{NS: testNS, IDs: ids}), "not due yet")
	f.advance(DefaultRetention)
	require.Equal(t, 2, f.apply(JobPrune.Type, &SweepCmd{NS: testNS, IDs: ids}), "completed and cancelled, not dead")
	_, err := ReadJob(f.db, testNS, c)
	require.Error(t, err)
	require.Equal(t, job.Dead, f.job(d).State)
	require.Equal(t, 0, f.apply(JobPrune.Type, &SweepCmd{NS: testNS, IDs: ids}), "a repeated prune changes nothing")
	require.EqualValues(t, []int64{0, 0, 0, 0, 0, 0, 1, 0}, f.counts("q"))
}

func TestApplyTimelineAndProgress(t *testing.T) {
	f := setupFSM(t)
	id := f.enqueue(&job.Job{Queue: "q", MaxRetries: 2})
	f.fetch("q")
	for i := range 5 {
		f.apply(Heartbeat.Type, &HeartbeatCmd{NS: testNS, Jobs: []HeartbeatItem{{ID: id, Progress: []byte(`{"current":` + string(rune('0'+i)) + `}`)}}})
	}
	f.apply(Fail.Type, &FailCmd{NS: testNS, ID: id, Error: "SMTP timeout"})
	j := f.job(id)
	require.Equal(t, []string{"enqueued", "started", "progress", "failed", "retry_scheduled"}, events(j))
	require.Equal(t, `{"current":4}`, j.Timeline[2].Detail, "only the last progress is kept")
	require.Equal(t, "worker w attempt 1", j.Timeline[1].Detail)
	require.Equal(t, "SMTP timeout", j.Timeline[3].Detail)
	require.Equal(t, fmtTime(j.NextAttempt), j.Timeline[4].Detail)
	for _, ev := range j.Timeline {
		require.Equal(t, f.now.UnixNano(), ev.At)
	}
	// The timeline stays bounded.
	for range job.MaxTimeline {
		f.jobOp(JobMove.Type, id, "q2")
		f.jobOp(JobMove.Type, id, "q")
	}
	require.Len(t, f.job(id).Timeline, job.MaxTimeline)
}

func TestApplyRetentionFollowsQueueDefaults(t *testing.T) {
	f := setupFSM(t)
	f.e.retention = time.Hour
	id := f.enqueue(&job.Job{Queue: "q"})
	f.jobOp(JobCancel.Type, id)
	require.Equal(t, f.now.Add(time.Hour).UnixNano(), f.job(id).PruneAt, "the node's default")
	f.apply(QueueDefaultsSet.Type, &QueueDefaultsCmd{NS: testNS, Queue: "short", Defaults: QueueDefaults{Retention: int64(time.Minute)}})
	s := f.enqueue(&job.Job{Queue: "short"})
	f.jobOp(JobCancel.Type, s)
	require.Equal(t, f.now.Add(time.Minute).UnixNano(), f.job(s).PruneAt, "the queue's own retention")
}

// A namespace's retention sits between its queues' and the node's: it
// applies to jobs finishing after it is set, and purging or resetting it
// brings back the node's.
func TestApplyRetentionFollowsTheNamespace(t *testing.T) {
	f := setupFSM(t)
	f.e.retention = time.Hour
	require.Nil(t, f.apply(NamespaceConfigure.Type, &NamespaceConfigCmd{NS: testNS, Config: NamespaceConfig{Retention: int64(2 * time.Hour)}}))
	require.Equal(t, NamespaceConfig{Retention: int64(2 * time.Hour)}, ReadNamespaceConfig(f.db, testNS))
	require.Equal(t, NamespaceConfig{}, ReadNamespaceConfig(f.db, otherNS))
	id := f.enqueue(&job.Job{Queue: "q"})
	f.jobOp(JobCancel.Type, id)
	require.Equal(t, f.now.Add(2*time.Hour).UnixNano(), f.job(id).PruneAt, "the namespace's retention")
	f.apply(QueueDefaultsSet.Type, &QueueDefaultsCmd{NS: testNS, Queue: "short", Defaults: QueueDefaults{Retention: int64(time.Minute)}})
	s := f.enqueue(&job.Job{Queue: "short"})
	f.jobOp(JobCancel.Type, s)
	require.Equal(t, f.now.Add(time.Minute).UnixNano(), f.job(s).PruneAt, "the queue's own retention comes first")

	other := f.enqueueIn(otherNS, &EnqueueCmd{}, &job.Job{Queue: "q"})[0]
	f.apply(JobCancel.Type, &JobOpCmd{NS: otherNS, ID: other})
	j, err := ReadJob(f.db, otherNS, other)
	require.NoError(t, err)
	require.Equal(t, f.now.Add(time.Hour).UnixNano(), j.PruneAt, "another namespace keeps the node's")

	require.Nil(t, f.apply(NamespaceConfigure.Type, &NamespaceConfigCmd{NS: testNS}))
	require.False(t, f.has(keys.NamespaceConfig(testNS)), "zero settings leave no record")
	r := f.enqueue(&job.Job{Queue: "q"})
	f.jobOp(JobCancel.Type, r)
	require.Equal(t, f.now.Add(time.Hour).UnixNano(), f.job(r).PruneAt, "reset: the node's again")
	require.Error(t, f.apply(NamespaceConfigure.Type, &NamespaceConfigCmd{NS: testNS, Config: NamespaceConfig{Retention: -1}}).(error))

	require.Nil(t, f.apply(NamespaceConfigure.Type, &NamespaceConfigCmd{NS: testNS, Config: NamespaceConfig{Retention: int64(2 * time.Hour)}}))
	f.purge(testNS, nil)
	require.Equal(t, NamespaceConfig{}, ReadNamespaceConfig(f.db, testNS), "a purge removes the setting")
	p := f.enqueue(&job.Job{Queue: "q"})
	f.jobOp(JobCancel.Type, p)
	require.Equal(t, f.now.Add(time.Hour).UnixNano(), f.job(p).PruneAt, "after a purge: the node's")
}

package engine

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/shard/job"
	"github.com/jobbie/jobbie/shard/keys"
	"github.com/jobbie/jobbie/wire"
)

func (f *fsmBundle) release(worker string, items ...ReleaseItem) []bool {
	f.t.Helper()
	return f.apply(Release.Type, &ReleaseCmd{NS: testNS, WorkerID: worker, Jobs: items}).([]bool)
}

// A lease given back by the worker it was leased to, for the attempt it
// was leased for, puts the job back in line without using an attempt.
func TestApplyReleaseGivesTheLeaseBack(t *testing.T) {
	f := setupFSM(t)
	requireCode(t, f.apply(Release.Type, &ReleaseCmd{NS: testNS, WorkerID: "w"}), "bad_request")
	id := f.enqueue(&job.Job{Queue: "q", MaxRetries: 0})
	later := f.enqueue(&job.Job{Queue: "q"})
	j := f.fetch("q")
	require.Equal(t, id, j.ID)
	require.Equal(t, []bool{false, false, false}, f.release("other", ReleaseItem{ID: id, Attempt: 1}, ReleaseItem{ID: later, Attempt: 0},
		ReleaseItem{ID: "job_nope"}), "another worker's lease, a pending job, an unknown one")
	require.Equal(t, []bool{false}, f.release("w", ReleaseItem{ID: id, Attempt: 2}), "another attempt")
	require.Equal(t, job.Active, f.job(id).State)

	require.Equal(t, []bool{true}, f.release("w", ReleaseItem{ID: id, Attempt: 1}))
	got := f.job(id)
	require.Equal(t, job.Pending, got.State)
	require.Zero(t, got.Attempt, "the attempt is not counted")
	require.Empty(t, got.WorkerID)
	require.Empty(t, got.Errors)
	require.Equal(t, []string{"enqueued", "started", "lease_released"}, events(got))
	require.Contains(t, got.Timeline[2].Detail, "worker w went away")
	require.EqualValues(t, 2, f.counts("q")[job.Pending])
	require.Zero(t, f.counts("q")[job.Active])
	require.Equal(t, []bool{false}, f.release("w", ReleaseItem{ID: id, Attempt: 1}), "released once")

	// Back at the head of its queue (its place is its creation), still
	// with all its retries: max_retries 0 and one real failure kills it.
	j = f.fetch("q")
	require.Equal(t, id, j.ID)
	require.Equal(t, 1, j.Attempt)
	require.Equal(t, job.Dead, f.apply(Fail.Type, &FailCmd{NS: testNS, ID: id, Error: "x"}).(*FailOutcome).State)

	// A job cancelled while leased to a worker that went away is cancelled.
	c := f.fetch("q")
	require.Equal(t, wire.CancelRequested, f.jobOp(JobCancel.Type, c.ID))
	require.Equal(t, []bool{true}, f.release("w", ReleaseItem{ID: c.ID, Attempt: 1}))
	require.Equal(t, job.Cancelled, f.job(c.ID).State)
}

// A lease that runs out uses up an attempt: pending again at once with
// its checkpoint while retries are left, then dead with lease_expired.
func TestApplyReclaimCountedUsesUpAttempts(t *testing.T) {
	f := setupFSM(t)
	id := f.enqueue(&job.Job{Queue: "q", MaxRetries: 2})
	for attempt := 1; attempt <= 3; attempt++ {
		j := f.fetch("q")
		require.Equal(t, id, j.ID)
		require.Equal(t, attempt, j.Attempt)
		if attempt == 1 {
			f.apply(Heartbeat.Type, &HeartbeatCmd{NS: testNS, Jobs: []HeartbeatItem{{ID: id, Checkpoint: []byte(`{"at":7}`)}}})
		} else {
			require.JSONEq(t, `{"at":7}`, string(j.Checkpoint), "the checkpoint survives a lost lease")
		}
		require.Zero(t, f.apply(ReclaimCounted.Type, &SweepCmd{NS: testNS, IDs: []string{id}}), "the lease still runs")
		f.advance(11 * time.Second)
		require.Equal(t, 1, f.apply(ReclaimCounted.Type, &SweepCmd{NS: testNS, IDs: []string{id}}))
	}
	j := f.job(id)
	require.Equal(t, job.Dead, j.State)
	require.Equal(t, job.ReasonLeaseExpired, j.DeadReason)
	require.Len(t, j.Errors, 3)
	for i, e := range j.Errors {
		require.Equal(t, i+1, e.Attempt)
		require.Equal(t, wire.ReasonLeaseExpired, e.Error)
	}
	require.Equal(t, []string{"enqueued", "started", "lease_expired", "started", "lease_expired", "started", "lease_expired", "dead"}, events(j))
	require.True(t, f.has(keys.Dead(testNS, "", j.DeadAt, id)), "listed with the dead")

	// The Reclaim of older logs still never ends a job.
	old := f.enqueue(&job.Job{Queue: "old", MaxRetries: 0})
	f.fetch("old")
	f.advance(11 * time.Second)
	require.Equal(t, 1, f.apply(Reclaim.Type, &SweepCmd{NS: testNS, IDs: []string{old}}))
	require.Equal(t, job.Pending, f.job(old).State)
}

// Deleting a dependency settles its held dependents as if it had failed;
// deleting an unfinished batch member counts it as failed in its batch.
func TestApplyDiscardSettlesWhatWaits(t *testing.T) {
	f := setupFSM(t)
	dep := f.enqueue(&job.Job{Queue: "a"})
	cancelled := f.enqueueDependent(false, dep)
	runs := f.enqueueDependent(true, dep)
	requireCode(t, f.jobOp(JobDiscard.Type, "job_nope"), "not_found")
	f.fetch("a")
	requireCode(t, f.jobOp(JobDiscard.Type, dep), "conflict") // active: cancel it first
	require.Equal(t, []bool{true}, f.release("w", ReleaseItem{ID: dep, Attempt: 1}))
	require.Nil(t, f.jobOp(JobDiscard.Type, dep))
	require.Equal(t, job.Cancelled, f.job(cancelled).State)
	require.Equal(t, job.ReasonDependencyFailed, f.job(cancelled).CancelReason)
	require.Equal(t, job.Pending, f.job(runs).State)
	require.False(t, f.has(keys.Dependent(testNS, dep, cancelled)))

	// A held job deleted takes its reverse edges with it.
	dep2 := f.enqueue(&job.Job{Queue: "a2"})
	held := f.enqueueDependent(false, dep2)
	require.True(t, f.has(keys.Dependent(testNS, dep2, held)))
	require.Nil(t, f.jobOp(JobDiscard.Type, held))
	require.False(t, f.has(keys.Dependent(testNS, dep2, held)))

	// The JobDelete of older logs leaves dependents held.
	dep3 := f.enqueue(&job.Job{Queue: "a3"})
	stays := f.enqueueDependent(false, dep3)
	require.Nil(t, f.jobOp(JobDelete.Type, dep3))
	require.Equal(t, job.Held, f.job(stays).State)

	// Batch: one member deleted, one completed: the callback fires, the
	// deleted one counted failed.
	c := &EnqueueCmd{NS: testNS, Batch: &BatchRecord{ID: "batch_01HX0000000000000000000009", CallbackQueue: "done"}}
	m1, m2 := f.e.newIDForTest(), f.e.newIDForTest()
	for _, id := range []string{m1, m2} {
		c.Jobs = append(c.Jobs, (&job.Job{ID: id, Queue: "members", BatchID: c.Batch.ID}).Encode())
	}
	f.apply(Enqueue.Type, c)
	require.Nil(t, f.apply(BulkApplySettle.Type, &BulkCmd{NS: testNS, Action: job.BulkDelete, IDs: []string{m1}}).(*BulkOutcome).Failures)
	b, err := ReadBatch(f.db, testNS, c.Batch.ID)
	require.NoError(t, err)
	require.Equal(t, 1, b.Failed)
	require.Equal(t, 1, b.Pending)
	require.Equal(t, job.Completed, f.apply(Ack.Type, &AckCmd{NS: testNS, ID: f.fetch("members").ID}))
	cbs := f.pendingIn("done")
	require.Len(t, cbs, 1)
	var p wire.BatchCallback
	require.NoError(t, json.Unmarshal(cbs[0].Payload, &p))
	require.Equal(t, []string{m1}, p.FailedIDs)
	require.Equal(t, []string{m2}, p.SucceededIDs)
}

func TestApplyQueueClearAllTakesRetryingAndSettles(t *testing.T) {
	f := setupFSM(t)
	retry := f.enqueue(&job.Job{Queue: "q", MaxRetries: 3})
	require.Equal(t, retry, f.fetch("q").ID)
	require.Equal(t, job.Retrying, f.apply(Fail.Type, &FailCmd{NS: testNS, ID: retry, Error: "x"}).(*FailOutcome).State)
	act := f.enqueue(&job.Job{Queue: "q"})
	require.Equal(t, act, f.fetch("q").ID)
	pend := f.enqueue(&job.Job{Queue: "q"})
	sched := f.enqueue(&job.Job{Queue: "q", ScheduledAt: f.now.Add(time.Hour).UnixNano()})
	held := f.enqueueDependent(false, pend)
	c := &QueueSweepCmd{NS: testNS, Queue: "q"}
	total := 0
	for {
		st := f.apply(QueueClearAll.Type, c).(*QueueStep)
		total += st.Removed
		if st.Next == nil {
			break
		}
		c.Phase, c.After = st.Phase, st.Next
	}
	require.Equal(t, 3, total, "pending, scheduled, retrying")
	for _, id := range []string{pend, sched, retry} {
		require.False(t, f.has(keys.Job(testNS, id)), id)
	}
	require.Equal(t, job.Active, f.job(act).State)
	require.Equal(t, job.Cancelled, f.job(held).State, "its dependency was cleared")
	require.EqualValues(t, []int64{0, 0, 0, 1, 0, 0, 0, 0}, f.counts("q"))
}

func TestApplyRecordPrune(t *testing.T) {
	f := setupFSM(t)
	enqueueBatch := func(id string, prunable bool) string {
		m := f.e.newIDForTest()
		f.apply(Enqueue.Type, &EnqueueCmd{NS: testNS, Batch: &BatchRecord{ID: id, CallbackQueue: "done", Prunable: prunable},
			Jobs: [][]byte{(&job.Job{ID: m, Queue: "members", BatchID: id}).Encode()}})
		return m
	}
	kept, pruned := "batch_01HX000000000000000000000A", "batch_01HX000000000000000000000B"
	enqueueBatch(kept, false)
	enqueueBatch(pruned, true)
	for range 2 {
		require.Equal(t, job.Completed, f.apply(Ack.Type, &AckCmd{NS: testNS, ID: f.fetch("members").ID}))
	}
	done := f.now
	at := done.Add(DefaultRetention).UnixNano()
	require.True(t, f.has(keys.RecordPruneEntry(testNS, at, pruned)))
	require.False(t, f.has(keys.RecordPruneEntry(testNS, at, kept)), "a batch of an older log is kept")

	op := &BulkOp{ID: "bulk_01HX000000000000000000000C", Action: job.BulkRetry, Filter: []byte(`{"state":["dead"]}`), Prunable: true}
	f.apply(BulkCreate.Type, &BulkOpCmd{NS: testNS, Op: op})
	f.apply(BulkCancel.Type, &BulkOpCmd{NS: testNS, ID: op.ID})
	require.True(t, f.has(keys.RecordPruneEntry(testNS, at, op.ID)))

	items := []RecordItem{{At: at, ID: pruned}, {At: at, ID: op.ID}, {At: at, ID: kept}}
	require.Zero(t, f.apply(RecordPrune.Type, &RecordPruneCmd{NS: testNS, Items: items}), "not due yet")
	f.advance(DefaultRetention)
	require.Equal(t, 2, f.apply(RecordPrune.Type, &RecordPruneCmd{NS: testNS, Items: items}))
	_, err := ReadBatch(f.db, testNS, pruned)
	requireCode(t, err, "not_found")
	require.False(t, f.has(keys.BatchMember(testNS, pruned, "")), "members go with it")
	_, err = ReadBulkOp(f.db, testNS, op.ID)
	requireCode(t, err, "not_found")
	_, err = ReadBatch(f.db, testNS, kept)
	require.NoError(t, err)
	require.Zero(t, f.apply(RecordPrune.Type, &RecordPruneCmd{NS: testNS, Items: items}), "pruned once")
}

// Each later step of a chain is enqueued with its own options; the ones
// it leaves out come from its queue's defaults.
func TestApplyChainStepOptions(t *testing.T) {
	f := setupFSM(t)
	two := 2
	f.apply(QueueDefaultsSet.Type, &QueueDefaultsCmd{NS: testNS, Queue: "s2", Defaults: QueueDefaults{MaxRetries: &two, Backoff: job.BackoffLinear}})
	chain := []byte(`{"steps":[{"queue":"s1"},{"queue":"s2","priority":"critical","retry_base_delay":"3s","lease_duration":"2s",` +
		`"expire_after":60,"tags":{"step":"2"}},{"queue":"s3"}]}`)
	first := &job.Job{ID: f.e.newIDForTest(), Queue: "s1", ChainID: "chain_1", Chain: chain, Backoff: job.BackoffNone}
	f.apply(Enqueue.Type, &EnqueueCmd{NS: testNS, Jobs: [][]byte{first.Encode()}})
	f.finish("s1", `{"r":1}`, "")
	next := f.pendingIn("s2")
	require.Len(t, next, 1)
	s2 := next[0]
	require.Equal(t, job.Critical, s2.Priority)
	require.Equal(t, int64(3*time.Second), s2.BaseDelay)
	require.Equal(t, int64(2*time.Second), s2.OwnLeaseNs)
	require.Equal(t, f.now.Add(time.Minute).UnixNano(), s2.ExpireAt)
	require.Equal(t, map[string]string{"step": "2"}, s2.Tags)
	require.True(t, f.has(keys.TagEntry(testNS, "step", "2", s2.CreatedAt, s2.ID)), "its tags are searchable")
	require.Equal(t, 2, s2.MaxRetries, "left out: the queue's default")
	require.Equal(t, job.BackoffLinear, s2.Backoff)
	// A fetch naming no lease takes the job's own.
	j := f.apply(Fetch.Type, &FetchCmd{NS: testNS, Queues: []string{"s2"}, WorkerID: "w", LeaseNs: int64(time.Minute), LeaseDefault: true}).(*job.Job)
	require.Equal(t, f.now.Add(2*time.Second).UnixNano(), j.LeaseUntil)
	require.Equal(t, job.Completed, f.apply(Ack.Type, &AckCmd{NS: testNS, ID: j.ID}))
	s3 := f.pendingIn("s3")[0]
	require.Equal(t, job.Normal, s3.Priority)
	require.Equal(t, job.DefaultMaxRetries, s3.MaxRetries)
	require.Nil(t, s3.Tags)
}

// A scoped operation keeps its scope in its record; an unscoped one has
// none (every queue).
func TestApplyBulkCreateScoped(t *testing.T) {
	f := setupFSM(t)
	scoped := &BulkOp{ID: "bulk_01HX000000000000000000000D", Action: job.BulkRetry, Filter: []byte(`{"state":["dead"]}`),
		Scoped: true, Scope: []string{"emails.*", "billing"}}
	f.apply(BulkCreateScoped.Type, &BulkOpCmd{NS: testNS, Op: scoped})
	got, err := ReadBulkOp(f.db, testNS, scoped.ID)
	require.NoError(t, err)
	require.True(t, got.Scoped)
	require.Equal(t, []string{"emails.*", "billing"}, got.Scope)

	none := &BulkOp{ID: "bulk_01HX000000000000000000000E", Action: job.BulkRetry, Filter: []byte(`{"state":["dead"]}`), Scoped: true}
	f.apply(BulkCreateScoped.Type, &BulkOpCmd{NS: testNS, Op: none})
	got, err = ReadBulkOp(f.db, testNS, none.ID)
	require.NoError(t, err)
	require.True(t, got.Scoped, "a scope of no queue stays a scope")
	require.Empty(t, got.Scope)

	all := &BulkOp{ID: "bulk_01HX000000000000000000000F", Action: job.BulkRetry, Filter: []byte(`{"state":["dead"]}`)}
	f.apply(BulkCreate.Type, &BulkOpCmd{NS: testNS, Op: all})
	got, err = ReadBulkOp(f.db, testNS, all.ID)
	require.NoError(t, err)
	require.False(t, got.Scoped)
}

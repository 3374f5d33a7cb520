package engine

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/shard/job"
	"github.com/jobbie/jobbie/shard/keys"
	"github.com/jobbie/jobbie/wire"
)

// pendingIn lists the pending jobs of queue, oldest first.
func (f *fsmBundle) pendingIn(queue string) []*job.Job {
	f.t.Helper()
	p := keys.PendingQueue(testNS, queue)
	it, err := f.db.NewIter(nil)
	require.NoError(f.t, err)
	defer it.Close()
	var out []*job.Job
	for ok := it.SeekGE(p); ok && len(it.Key()) > len(p) && string(it.Key()[:len(p)]) == string(p); ok = it.Next() {
		id, err := keys.PendingID(it.Key())
		require.NoError(f.t, err)
		out = append(out, f.job(id))
	}
	return out
}

// finish fetches the one pending job of queue and acks it with result, or
// fails it to death when result is "".
func (f *fsmBundle) finish(queue, result, step string) *job.Job {
	f.t.Helper()
	j := f.fetch(queue)
	require.NotNil(f.t, j, "a job pending in %s", queue)
	if result == "" {
		for {
			out := f.apply(Fail.Type, &FailCmd{NS: testNS, ID: j.ID, Error: "boom " + j.ID}).(*FailOutcome)
			if out.State == job.Dead {
				break
			}
			f.advance(time.Hour)
			require.Equal(f.t, 1, f.apply(Promote.Type, &SweepCmd{NS: testNS, IDs: []string{j.ID}}))
			j = f.fetch(queue)
		}
	} else {
		require.Equal(f.t, job.Completed, f.apply(Ack.Type, &AckCmd{NS: testNS, ID: j.ID, Result: []byte(result), Step: step}))
	}
	return f.job(j.ID)
}

func TestApplyBatchCallbackFiresOnce(t *testing.T) {
	f := setupFSM(t)
	c := &EnqueueCmd{NS: testNS, Batch: &BatchRecord{ID: "batch_01HX0000000000000000000001", CallbackQueue: "done", CallbackPayload: []byte(`{"album":42}`)}}
	for i := 0; i < 100; i++ {
		c.Jobs = append(c.Jobs, (&job.Job{ID: f.e.newIDForTest(), Queue: "work", BatchID: c.Batch.ID, Backoff: job.BackoffNone}).Encode())
	}
	res := f.apply(Enqueue.Type, c).([]EnqueueResult)
	require.Len(t, res, 100)
	var failed []string
	for i := 0; i < 100; i++ {
		j := f.fetch("work")
		if i%33 == 5 { // 3 of them die
			f.apply(Fail.Type, &FailCmd{NS: testNS, ID: j.ID, Error: "x"})
			failed = append(failed, j.ID)
		} else {
			require.Equal(t, job.Completed, f.apply(Ack.Type, &AckCmd{NS: testNS, ID: j.ID}))
		}
		b, err := ReadBatch(f.db, testNS, c.Batch.ID)
		require.NoError(t, err)
		require.Equal(t, 99-i, b.Pending)
		if i < 99 {
			require.Empty(t, f.pendingIn("done"), "no callback before the last member")
		}
	}
	require.Len(t, failed, 3)
	cbs := f.pendingIn("done")
	require.Len(t, cbs, 1)
	var p wire.BatchCallback
	require.NoError(t, json.Unmarshal(cbs[0].Payload, &p))
	require.Equal(t, 97, p.Succeeded)
	require.Equal(t, 3, p.Failed)
	require.Len(t, p.SucceededIDs, 97)
	require.ElementsMatch(t, failed, p.FailedIDs)
	require.JSONEq(t, `{"album":42}`, string(mustJSON(p.CallbackPayload)))
	b, _ := ReadBatch(f.db, testNS, c.Batch.ID)
	require.Equal(t, cbs[0].ID, b.CallbackJobID)
	require.Equal(t, f.now.UnixNano(), b.CompletedAt)

	// A dead member retried by hand and completed fires nothing more.
	require.Equal(t, job.Pending, f.jobOp(JobRetry.Type, failed[0]))
	require.Equal(t, job.Completed, f.apply(Ack.Type, &AckCmd{NS: testNS, ID: f.fetch("work").ID}))
	require.Len(t, f.pendingIn("done"), 1)
	b2, _ := ReadBatch(f.db, testNS, c.Batch.ID)
	require.Equal(t, *b, *b2)
}

func TestApplyBatchCountsCancelledAsFailed(t *testing.T) {
	f := setupFSM(t)
	c := &EnqueueCmd{NS: testNS, Batch: &BatchRecord{ID: "batch_01HX0000000000000000000002", CallbackQueue: "done"}}
	a, b := f.e.newIDForTest(), f.e.newIDForTest()
	c.Jobs = [][]byte{(&job.Job{ID: a, Queue: "work", BatchID: c.Batch.ID}).Encode(), (&job.Job{ID: b, Queue: "work", BatchID: c.Batch.ID}).Encode()}
	f.apply(Enqueue.Type, c)
	require.Equal(t, wire.CancelDone, f.jobOp(JobCancel.Type, a))
	f.finish("work", `1`, "")
	var p wire.BatchCallback
	require.NoError(t, json.Unmarshal(f.pendingIn("done")[0].Payload, &p))
	require.Equal(t, []string{b}, p.SucceededIDs)
	require.Equal(t, []string{a}, p.FailedIDs)
	require.JSONEq(t, "null", string(p.CallbackPayload))
}

func chainJob(f *fsmBundle, withExit bool) string {
	spec := wire.ChainSpec{Steps: []wire.StepSpec{{Queue: "s1"}, {Queue: "s2", Payload: []byte(`{"k":2}`)}, {Queue: "s3"}},
		OnFailure: &wire.StepSpec{Queue: "failed", Payload: []byte(`{"notify":"ops"}`)}}
	if withExit {
		spec.OnExit = &wire.StepSpec{Queue: "exited"}
	}
	raw, err := json.Marshal(spec) // as the proposer stores a validated chain
	require.NoError(f.t, err)
	return f.enqueue(&job.Job{Queue: "s1", Payload: []byte(`{"doc":1}`), ChainID: "chain_01HX0000000000000000000001", Chain: raw, MaxRetries: 0})
}

func TestApplyChainForwardsResults(t *testing.T) {
	f := setupFSM(t)
	chainJob(f, true)
	s1 := f.finish("s1", `{"r":1}`, "")
	require.True(t, s1.Flow.Has(job.FlowChainAdvanced))
	s2 := f.pendingIn("s2")
	require.Len(t, s2, 1)
	require.JSONEq(t, `{"previous_result":{"r":1},"payload":{"k":2}}`, string(s2[0].Payload))
	require.Equal(t, 1, s2[0].ChainStep)
	require.Equal(t, s1.ChainID, s2[0].ChainID)
	f.finish("s2", `{"r":2}`, wire.StepContinue)
	s3 := f.pendingIn("s3")
	require.Len(t, s3, 1)
	require.JSONEq(t, `{"previous_result":{"r":2},"payload":null}`, string(s3[0].Payload))
	f.finish("s3", `{"r":3}`, "")
	require.Empty(t, f.pendingIn("exited"), "on_exit is for an early stop only")
	require.Empty(t, f.pendingIn("failed"))

	// A completed step retried by hand does not enqueue its next step again.
	require.Equal(t, job.Pending, f.jobOp(JobRetry.Type, s1.ID))
	f.finish("s1", `{"r":1}`, "")
	require.Empty(t, f.pendingIn("s2"))
}

func TestApplyChainOnFailureWhenAStepDies(t *testing.T) {
	f := setupFSM(t)
	chainJob(f, true)
	f.finish("s1", `{"r":1}`, "")
	s2 := f.finish("s2", "", "")
	require.Empty(t, f.pendingIn("s3"))
	h := f.pendingIn("failed")
	require.Len(t, h, 1)
	var p wire.ChainFailurePayload
	require.NoError(t, json.Unmarshal(h[0].Payload, &p))
	require.Equal(t, wire.ChainFailurePayload{ChainID: s2.ChainID, FailedStep: 1, FailedJobID: s2.ID, Error: "boom " + s2.ID,
		DeadReason: job.ReasonRetriesExhausted, Payload: []byte(`{"notify":"ops"}`)}, p)
	require.Empty(t, h[0].ChainID, "a handler is not a step")
}

func TestApplyChainExitRunsOnExit(t *testing.T) {
	f := setupFSM(t)
	chainJob(f, true)
	s1 := f.finish("s1", `{"stop":true}`, wire.StepExit)
	require.Empty(t, f.pendingIn("s2"))
	h := f.pendingIn("exited")
	require.Len(t, h, 1)
	require.JSONEq(t, `{"chain_id":"`+s1.ChainID+`","exited_step":0,"exited_job_id":"`+s1.ID+`","previous_result":{"stop":true},"payload":null}`, string(h[0].Payload))

	// Without on_exit, exit just stops the chain.
	g := setupFSM(t)
	chainJob(g, false)
	g.finish("s1", `1`, wire.StepExit)
	require.Empty(t, g.pendingIn("s2"))
}

func (f *fsmBundle) enqueueDependent(run bool, deps ...string) string {
	j := &job.Job{Queue: "dep", DependsOn: deps}
	if run {
		j.Flow |= job.FlowRunOnDepFail
	}
	j.ID = f.e.newIDForTest()
	res := f.apply(Enqueue.Type, &EnqueueCmd{NS: testNS, Jobs: [][]byte{j.Encode()}, Deps: true})
	if err, ok := res.(error); ok {
		f.t.Fatalf("enqueue: %v", err)
	}
	return j.ID
}

func TestApplyDependencyRelease(t *testing.T) {
	f := setupFSM(t)
	a := f.enqueue(&job.Job{Queue: "a"})
	b := f.enqueue(&job.Job{Queue: "b"})
	d := f.enqueueDependent(false, a, b)
	require.Equal(t, job.Held, f.job(d).State)
	require.Equal(t, 2, f.job(d).DepsLeft)
	require.True(t, f.has(keys.Dependent(testNS, a, d)))
	require.True(t, f.job(a).Flow.Has(job.FlowHasDependents))
	require.EqualValues(t, 1, f.counts("dep")[job.Held])
	f.finish("a", `1`, "")
	require.Equal(t, job.Held, f.job(d).State)
	require.False(t, f.has(keys.Dependent(testNS, a, d)), "edges go once settled")
	require.False(t, f.job(a).Flow.Has(job.FlowHasDependents))
	f.finish("b", `1`, "")
	require.Equal(t, job.Pending, f.job(d).State)
	require.EqualValues(t, 0, f.counts("dep")[job.Held])
	require.Contains(t, events(f.job(d)), "released")
	require.Equal(t, d, f.fetch("dep").ID)

	// A dependency already completed at enqueue counts at once.
	d2 := f.enqueueDependent(false, a)
	require.Equal(t, job.Pending, f.job(d2).State)
	require.Zero(t, f.job(d2).DepsLeft)
}

func TestApplyDependencyFailureCancels(t *testing.T) {
	f := setupFSM(t)
	a := f.enqueue(&job.Job{Queue: "a", MaxRetries: 0})
	b := f.enqueue(&job.Job{Queue: "b"})
	d := f.enqueueDependent(false, a, b)
	chained := f.enqueueDependent(false, d) // cancelled in turn
	f.finish("a", "", "")
	require.Equal(t, job.Cancelled, f.job(d).State)
	require.Equal(t, job.ReasonDependencyFailed, f.job(d).CancelReason)
	require.Equal(t, job.Cancelled, f.job(chained).State)
	// b completing later touches nothing.
	f.finish("b", `1`, "")
	require.Equal(t, job.Cancelled, f.job(d).State)
	// A dependency already dead at enqueue: cancelled at once.
	late := f.enqueueDependent(false, a)
	require.Equal(t, job.Cancelled, f.job(late).State)
	require.Equal(t, job.ReasonDependencyFailed, f.job(late).CancelReason)
	// A cancelled dependency counts as failed too.
	c := f.enqueue(&job.Job{Queue: "c"})
	dc := f.enqueueDependent(false, c)
	f.jobOp(JobCancel.Type, c)
	require.Equal(t, job.Cancelled, f.job(dc).State)
}

func TestApplyDependencyFailureRunPolicy(t *testing.T) {
	f := setupFSM(t)
	a := f.enqueue(&job.Job{Queue: "a", MaxRetries: 0})
	d := f.enqueueDependent(true, a)
	f.finish("a", "", "")
	require.Equal(t, job.Pending, f.job(d).State)
	require.Equal(t, job.Pending, f.job(f.enqueueDependent(true, a)).State, "already dead: runs at once")
}

func TestApplyDependencyUnknownRefusesTheEnqueue(t *testing.T) {
	f := setupFSM(t)
	ok := f.e.newIDForTest()
	j := &job.Job{ID: f.e.newIDForTest(), Queue: "dep", DependsOn: []string{"job_0000000000000000000000XXXX"}}
	res := f.apply(Enqueue.Type, &EnqueueCmd{NS: testNS, Jobs: [][]byte{(&job.Job{ID: ok, Queue: "q"}).Encode(), j.Encode()}, Deps: true})
	err, isErr := res.(error)
	require.True(t, isErr)
	require.Equal(t, apierr.BadRequest, apierr.CodeOf(err))
	require.False(t, f.has(keys.Job(testNS, ok)), "nothing was written")
}

func TestApplyHeldJobWithLaterScheduleAndTTL(t *testing.T) {
	f := setupFSM(t)
	a := f.enqueue(&job.Job{Queue: "a"})
	j := &job.Job{ID: f.e.newIDForTest(), Queue: "dep", DependsOn: []string{a}, ScheduledAt: f.now.Add(time.Hour).UnixNano()}
	f.apply(Enqueue.Type, &EnqueueCmd{NS: testNS, Jobs: [][]byte{j.Encode()}, Deps: true})
	require.Equal(t, job.Held, f.job(j.ID).State)
	f.finish("a", `1`, "")
	require.Equal(t, job.Scheduled, f.job(j.ID).State, "released into its schedule")
}

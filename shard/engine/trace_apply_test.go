package engine

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/shard/job"
	"github.com/jobbie/jobbie/wire"
)

const (
	traceA = "00-0000000000000000000000000000000a-000000000000000a-01"
	traceB = "00-0000000000000000000000000000000b-000000000000000b-01"
)

// A fire that carries a traceparent gives it to its job; one without (a
// log from before traces) enqueues no trace. Ops pick the traced numbers
// only for commands that carry one.
func TestApplyScheduleFireTrace(t *testing.T) {
	f := setupFSM(t)
	run := f.now.Add(time.Minute)
	f.createSchedule(sch1, "a", run)
	f.advance(time.Minute)
	c := &FireCmd{NS: testNS, ID: sch1, RunAt: run.UnixNano(), NextRun: run.Add(time.Minute).UnixNano(), JobID: f.e.newIDForTest(), Trace: traceA}
	require.Equal(t, ScheduleFireTraced, ScheduleFireFor(c))
	require.Equal(t, true, f.apply(ScheduleFireTraced.Type, c))
	require.Equal(t, &job.Trace{Parent: traceA}, f.job(c.JobID).Trace)

	f.advance(time.Minute)
	old := &FireCmd{NS: testNS, ID: sch1, RunAt: c.NextRun, NextRun: c.NextRun + int64(time.Minute), JobID: f.e.newIDForTest()}
	require.Equal(t, ScheduleFire, ScheduleFireFor(old))
	require.Equal(t, true, f.apply(ScheduleFire.Type, old))
	require.Nil(t, f.job(old.JobID).Trace)

	require.Equal(t, Enqueue, EnqueueFor(&EnqueueCmd{}, false))
	require.Equal(t, EnqueueTraced, EnqueueFor(&EnqueueCmd{}, true))
	require.Equal(t, EnqueueTraced, EnqueueFor(&EnqueueCmd{Batch: &BatchRecord{TraceParent: traceA}}, false))
}

// A chain's steps continue their step's trace unless the step names its
// own; a batch's callback takes the batch's.
func TestApplyTraceOfSpawnedJobs(t *testing.T) {
	f := setupFSM(t)
	spec := wire.ChainSpec{Steps: []wire.StepSpec{{Queue: "s1"}, {Queue: "s2"}, {Queue: "s3", TraceParent: traceB, TraceState: "b=1"}}}
	raw, err := json.Marshal(spec)
	require.NoError(t, err)
	j := &job.Job{ID: f.e.newIDForTest(), Queue: "s1", ChainID: "chain_01HX0000000000000000000001", Chain: raw, Backoff: job.BackoffNone,
		Trace: &job.Trace{Parent: traceA, State: "a=1"}}
	f.apply(EnqueueTraced.Type, &EnqueueCmd{NS: testNS, Jobs: [][]byte{j.Encode()}})
	f.finish("s1", `1`, "")
	require.Equal(t, &job.Trace{Parent: traceA, State: "a=1"}, f.pendingIn("s2")[0].Trace, "continues the step's")
	f.finish("s2", `2`, "")
	require.Equal(t, &job.Trace{Parent: traceB, State: "b=1"}, f.pendingIn("s3")[0].Trace, "the step's own")

	c := &EnqueueCmd{NS: testNS, Batch: &BatchRecord{ID: "batch_01HX0000000000000000000009", CallbackQueue: "done", TraceParent: traceB}}
	c.Jobs = [][]byte{(&job.Job{ID: f.e.newIDForTest(), Queue: "work", BatchID: c.Batch.ID}).Encode()}
	f.apply(EnqueueTraced.Type, c)
	f.finish("work", `1`, "")
	require.Equal(t, &job.Trace{Parent: traceB}, f.pendingIn("done")[0].Trace)

	// A batch of a log from before traces calls back without one.
	c = &EnqueueCmd{NS: testNS, Batch: &BatchRecord{ID: "batch_01HX0000000000000000000010", CallbackQueue: "done2"}}
	c.Jobs = [][]byte{(&job.Job{ID: f.e.newIDForTest(), Queue: "work2", BatchID: c.Batch.ID}).Encode()}
	f.apply(Enqueue.Type, c)
	f.finish("work2", `1`, "")
	require.Nil(t, f.pendingIn("done2")[0].Trace)
}

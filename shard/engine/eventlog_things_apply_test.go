package engine

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/shard/job"
	"github.com/jobbie/jobbie/wire"
)

// wideFSM is an fsmBundle whose log keeps the events of other things.
func wideFSM(t *testing.T) *fsmBundle {
	f := setupFSM(t)
	f.apply(EventLogStartWide.Type, &EventLogStartCmd{})
	require.True(t, f.e.EventLogWide(f.db))
	return f
}

// things is the events of other things than jobs in ns's log, in order,
// without their sequence numbers.
func (f *fsmBundle) things() []Event {
	f.t.Helper()
	evs, _, _ := f.events(0)
	var out []Event
	for _, ev := range evs {
		if !ev.IsJob() {
			ev.Seq = 0
			out = append(out, ev)
		}
	}
	return out
}

// A batch logs batch.completed once, as its callback is enqueued: failed
// when a member failed.
func TestEventBatchCompleted(t *testing.T) {
	t.Parallel()
	f := wideFSM(t)
	c := &EnqueueCmd{NS: testNS, Batch: &BatchRecord{ID: "batch_01HX0000000000000000000001", CallbackQueue: "done"}}
	for range 2 {
		c.Jobs = append(c.Jobs, (&job.Job{ID: f.e.newIDForTest(), Queue: "work", BatchID: c.Batch.ID, Backoff: job.BackoffNone}).Encode())
	}
	f.apply(Enqueue.Type, c)
	f.finish("work", `1`, "")
	require.Empty(t, f.things(), "one member is still pending")
	f.finish("work", "", "")
	b, err := ReadBatch(f.db, testNS, c.Batch.ID)
	require.NoError(t, err)
	require.Equal(t, []Event{{Type: EvBatchCompleted, Subject: c.Batch.ID, Queue: "done", JobID: b.CallbackJobID, Detail: ChainFailed,
		At: f.now.UnixNano()}}, f.things())
}

// A chain logs chain.completed as it ends: its last step completed, a
// step stopped it (exit), a step died (once, with or without on_failure)
// or was cancelled.
func TestEventChainCompleted(t *testing.T) {
	t.Parallel()
	const chain = "chain_01HX0000000000000000000001"
	ended := func(f *fsmBundle) []string {
		var out []string
		for _, ev := range f.things() {
			require.Equal(t, EvChainCompleted, ev.Type)
			require.Equal(t, chain, ev.Subject)
			out = append(out, ev.Queue+" "+ev.Detail)
		}
		return out
	}
	f := wideFSM(t)
	chainJob(f, true)
	f.finish("s1", `1`, "")
	f.finish("s2", `2`, "")
	require.Empty(t, f.things(), "the chain is not over")
	last := f.finish("s3", `3`, "")
	require.Equal(t, []string{"s3 " + ChainSucceeded}, ended(f))
	require.Equal(t, last.ID, f.things()[0].JobID)

	f = wideFSM(t)
	chainJob(f, true)
	f.finish("s1", `1`, wire.StepExit)
	require.Equal(t, []string{"s1 " + ChainExited}, ended(f))

	f = wideFSM(t)
	chainJob(f, false)
	f.finish("s1", `1`, "")
	dead := f.finish("s2", "", "")
	require.Equal(t, []string{"s2 " + ChainFailed}, ended(f))
	// Retried by hand, it dies again: the chain ended once.
	require.Equal(t, job.Pending, f.jobOp(JobRetry.Type, dead.ID))
	f.finish("s2", "", "")
	require.Equal(t, []string{"s2 " + ChainFailed}, ended(f))

	f = wideFSM(t)
	id := chainJob(f, false)
	require.Equal(t, "cancelled", f.jobOp(JobCancel.Type, id))
	require.Equal(t, []string{"s1 " + ChainCancelled}, ended(f))
}

// A schedule's fire logs schedule.fired with the job it made; a fire
// that does nothing logs nothing.
func TestEventScheduleFired(t *testing.T) {
	t.Parallel()
	f := wideFSM(t)
	run := f.now.Add(time.Minute)
	f.createSchedule(sch1, "nightly", run)
	c := &FireCmd{NS: testNS, ID: sch1, RunAt: run.UnixNano(), NextRun: run.Add(time.Minute).UnixNano(), JobID: f.e.newIDForTest()}
	require.Equal(t, false, f.apply(ScheduleFire.Type, c), "not due")
	require.Empty(t, f.things())
	f.advance(time.Minute)
	require.Equal(t, true, f.apply(ScheduleFire.Type, c))
	require.Equal(t, []Event{{Type: EvScheduleFired, Subject: sch1, Queue: "cron.q", JobID: c.JobID, Detail: "nightly", At: f.now.UnixNano()}},
		f.things())
}

// Pausing a queue logs queue.paused, by pause, drain or a configuration
// that pauses it; pausing a paused queue logs nothing.
func TestEventQueuePaused(t *testing.T) {
	t.Parallel()
	f := wideFSM(t)
	f.apply(QueuePause.Type, &QueueCmd{NS: testNS, Queue: "a"})
	f.apply(QueuePause.Type, &QueueCmd{NS: testNS, Queue: "a"})
	f.apply(QueueDrain.Type, &QueueCmd{NS: testNS, Queue: "a"})
	f.apply(QueueResume.Type, &QueueCmd{NS: testNS, Queue: "a"})
	f.apply(QueueDrain.Type, &QueueCmd{NS: testNS, Queue: "a"})
	f.apply(QueueConfigure.Type, &QueueConfigCmd{NS: testNS, Queue: "b", Paused: true})
	f.apply(QueueConfigure.Type, &QueueConfigCmd{NS: testNS, Queue: "b", Paused: true})
	var got []string
	for _, ev := range f.things() {
		require.Equal(t, EvQueuePaused, ev.Type)
		require.Equal(t, ev.Queue, ev.Subject)
		got = append(got, ev.Queue)
	}
	require.Equal(t, []string{"a", "a", "b"}, got)
}

// A 410 that disables push logs queue.push_disabled with its reason,
// once.
func TestEventQueuePushDisabled(t *testing.T) {
	t.Parallel()
	f := wideFSM(t)
	p := &PushConfig{URL: "https://h.example/q", TimeoutNs: int64(time.Second), MaxInFlight: 1}
	f.apply(QueueConfigurePush.Type, &QueueConfigCmd{NS: testNS, Queue: "q", Push: p})
	c := &PushDisableCmd{NS: testNS, Queue: "q", URL: p.URL, Reason: "the handler answered 410 Gone"}
	require.Equal(t, true, f.apply(PushDisable.Type, c))
	require.Equal(t, false, f.apply(PushDisable.Type, c))
	require.Equal(t, []Event{{Type: EvQueuePushDisabled, Subject: "q", Queue: "q", Detail: c.Reason, At: f.now.UnixNano()}}, f.things())
}

// The leader's disable of a failing endpoint logs webhook.disabled once.
func TestEventWebhookDisabled(t *testing.T) {
	t.Parallel()
	f := wideFSM(t)
	w := f.apply(WebhookCreate.Type, &WebhookCmd{NS: testNS, Hook: WebhookRecord{ID: "wh1", URL: "https://h.example/", Events: []string{"*"}, Enabled: true}}).(*WebhookRecord)
	c := &WebhookProgressCmd{NS: testNS, ID: "wh1", Updated: w.UpdatedAt, Cursor: w.Cursor, FailingSince: 1, Disable: true, Reason: "failing for 72h"}
	f.apply(WebhookProgress.Type, c)
	f.apply(WebhookProgress.Type, c)
	require.Equal(t, []Event{{Type: EvWebhookDisabled, Subject: "wh1", Detail: c.Reason, At: f.now.UnixNano()}}, f.things())
}

// A job's event encodes as it always did; another thing's reads back
// whole.
func TestEventEncodingOfThings(t *testing.T) {
	t.Parallel()
	j := Event{Type: "completed", JobID: "job_1", Queue: "q", State: job.Completed, From: job.Active, At: 5, Attempt: 1}
	b := appendEvent(nil, &j)
	var got Event
	require.True(t, decodeEvent(b, &got))
	require.Equal(t, j, got)
	require.Equal(t, byte(0), b[len(b)-1], "ends with the empty worker id, as before")
	th := Event{Type: EvQueuePushDisabled, Queue: "q", Subject: "q", Detail: "410", At: 7}
	got = Event{}
	require.True(t, decodeEvent(appendEvent(nil, &th), &got))
	require.Equal(t, th, got)
	require.Equal(t, "job.completed", j.Name())
	require.Equal(t, "queue.push_disabled", th.Name())
}

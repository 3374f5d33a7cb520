package engine

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/shard/job"
)

// A non-retryable failure makes the job dead at once, whatever retries
// remain: its error is recorded as any failure's, and its timeline and
// dead_reason say why.
func TestNonRetryableFailureIsDeadAtOnce(t *testing.T) {
	t.Parallel()
	f := setupFSM(t)
	f.apply(EventLogStart.Type, &EventLogStartCmd{})
	id := f.enqueue(&job.Job{Queue: "q", MaxRetries: 5})
	leased := f.fetchNamed("w", true)
	c := &FailCmd{NS: testNS, ID: id, WorkerID: "w", Error: "card declined", Backtrace: "at charge", Lease: job.LeaseOf(leased), NonRetryable: true}
	require.Equal(t, FailNonRetryable, FailFor(c))
	out := f.apply(FailFor(c).Type, c).(*FailOutcome)
	require.Equal(t, &FailOutcome{State: job.Dead, Reason: job.ReasonNonRetryable}, out)

	j := f.job(id)
	require.Equal(t, job.Dead, j.State)
	require.Equal(t, "non_retryable", j.DeadReason)
	require.Equal(t, 1, j.Attempt)
	require.Len(t, j.Errors, 1)
	require.Equal(t, "card declined", j.Errors[0].Error)
	require.Equal(t, "at charge", j.Errors[0].Backtrace)
	last := j.Timeline[len(j.Timeline)-1]
	require.Equal(t, job.EvDead, last.Kind)
	require.Equal(t, "non_retryable", last.Detail)
	require.Equal(t, int64(1), f.counts("q")[job.Dead])

	evs, _, _ := f.events(0)
	dead := evs[len(evs)-1]
	require.Equal(t, "dead", dead.Type)
	require.Equal(t, id, dead.JobID)
	require.Equal(t, "non_retryable", dead.DeadReason(), "the dead event says why")
}

// The same failure without the flag retries (the job above had retries
// left); a push dispatcher's non-retryable failure has its own number
// and is metered as its other settles.
func TestNonRetryableNumbers(t *testing.T) {
	t.Parallel()
	f := setupFSM(t)
	id := f.enqueue(&job.Job{Queue: "q", MaxRetries: 5})
	f.fetch("q")
	out := f.apply(Fail.Type, &FailCmd{NS: testNS, ID: id, WorkerID: "w", Error: "x"}).(*FailOutcome)
	require.Equal(t, job.Retrying, out.State)

	push := &FailCmd{NS: testNS, ID: id, WorkerID: PushWorker("q"), Lease: job.LeaseID{Attempt: 1, At: 1}, NonRetryable: true}
	require.Equal(t, FailPushNonRetryable, FailFor(push))
	push.NonRetryable = false
	require.Equal(t, FailPush, FailFor(push))
	plain := &FailCmd{NS: testNS, ID: id, NonRetryable: true}
	require.Equal(t, FailNonRetryable, FailFor(plain), "with or without a lease")

	// An expired job dies as expired, non-retryable or not.
	id = f.enqueue(&job.Job{Queue: "e", MaxRetries: 5, ExpireAfter: int64(time.Second)})
	f.fetch("e")
	f.advance(2 * time.Second)
	out = f.apply(FailNonRetryable.Type, &FailCmd{NS: testNS, ID: id, WorkerID: "w", Error: "x", NonRetryable: true}).(*FailOutcome)
	require.Equal(t, job.ReasonExpired, out.Reason)
}

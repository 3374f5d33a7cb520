package engine

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/shard/job"
	"github.com/jobbie/jobbie/wire"
)

// failWith fails id's attempt reporting u.
func (f *fsmBundle) failWith(id string, u *AIUsage) *FailOutcome {
	f.t.Helper()
	out, ok := f.apply(FailUsage.Type, &FailCmd{NS: testNS, ID: id, WorkerID: "w", Error: "model error", Usage: u}).(*FailOutcome)
	require.True(f.t, ok)
	return out
}

func (f *fsmBundle) perJobBudget(b BudgetRecord) {
	f.t.Helper()
	_, ok := f.apply(BudgetPutPerJob.Type, &BudgetCmd{NS: testNS, Budget: b, Create: true}).(*BudgetRecord)
	require.True(f.t, ok)
}

// retrying is a job of queue that retries at once, up to 3 times.
func retrying(queue string) *job.Job {
	return &job.Job{Queue: queue, MaxRetries: 3, Backoff: job.BackoffNone}
}

// reject: the attempt in which a job's totals pass the per-job limit
// runs to its end (its heartbeats go on), and its failure is final
// (dead_reason budget_exceeded); a job up to the limit, or of another
// queue, retries as usual.
func TestPerJobRejectFailsTheJobForGood(t *testing.T) { // not parallel: enqueue's ids come from one counter
	f := setupFSM(t)
	f.perJobBudget(BudgetRecord{Name: "cap", Scope: wire.BudgetScopeQueue, Value: "llm", PerJobCostNanos: dollar / 2, OnExceed: wire.BudgetReject})
	over := f.enqueue(retrying("llm"))
	require.Equal(t, over, f.fetch("llm").ID)
	require.Equal(t, []string{wire.HeartbeatOK}, f.apply(HeartbeatUsage.Type, &HeartbeatCmd{NS: testNS,
		Jobs: []HeartbeatItem{{ID: over, Usage: &AIUsage{CostNanos: dollar * 3 / 10}}}}))
	require.Equal(t, []string{wire.HeartbeatOK}, f.apply(HeartbeatUsage.Type, &HeartbeatCmd{NS: testNS,
		Jobs: []HeartbeatItem{{ID: over, Usage: &AIUsage{CostNanos: dollar * 3 / 10}}}}), "past the limit, the attempt goes on")
	out := f.failWith(over, &AIUsage{CostNanos: 1})
	require.Equal(t, job.Dead, out.State)
	require.Equal(t, job.ReasonBudgetExceeded, out.Reason)
	require.Equal(t, job.ReasonBudgetExceeded, f.job(over).DeadReason)

	exact := f.enqueue(retrying("llm"))
	require.Equal(t, exact, f.fetch("llm").ID)
	require.Equal(t, job.Pending, f.failWith(exact, &AIUsage{CostNanos: dollar / 2}).State, "a job may spend up to the limit")
	other := f.enqueue(retrying("other"))
	require.Equal(t, other, f.fetch("other").ID)
	require.Equal(t, job.Pending, f.failWith(other, &AIUsage{CostNanos: dollar, Input: 11}).State, "another queue is not the budget's")

	// A job past the limit before the budget said so is killed as it is
	// about to be fetched, and the fetch goes on to the next.
	f.perJobBudget(BudgetRecord{Name: "other-cap", Scope: wire.BudgetScopeQueue, Value: "other", PerJobTokens: 10, OnExceed: wire.BudgetReject})
	next := f.enqueue(retrying("other"))
	require.Equal(t, next, f.fetch("other").ID)
	require.Equal(t, job.Dead, f.job(other).State)
	require.Equal(t, job.ReasonBudgetExceeded, f.job(other).DeadReason)
}

// hold: a job past the limit is held as its next attempt is about to be
// fetched; approved, it runs again outside the budget.
func TestPerJobHoldHoldsTheNextAttempt(t *testing.T) { // not parallel: enqueue's ids come from one counter
	f := setupFSM(t)
	f.perJobBudget(BudgetRecord{Name: "tokens", Scope: wire.BudgetScopeNamespace, PerJobTokens: 100, OnExceed: wire.BudgetHold})
	id := f.enqueue(retrying("llm"))
	require.Equal(t, id, f.fetch("llm").ID)
	require.Equal(t, job.Pending, f.failWith(id, &AIUsage{Input: 60, Output: 41}).State, "hold does not end the job")
	under := f.enqueue(retrying("llm"))
	require.Equal(t, under, f.fetch("llm").ID, "the fetch passes over the held job to the next")
	require.Equal(t, job.Held, f.job(id).State)
	require.Equal(t, "tokens", f.heldBy(id))
	require.Equal(t, job.Pending, f.apply(JobApprove.Type, &JobOpCmd{NS: testNS, ID: id}))
	require.Equal(t, id, f.fetch("llm").ID)
	require.Equal(t, job.Pending, f.failWith(id, &AIUsage{Input: 500}).State)
	require.Equal(t, id, f.fetch("llm").ID, "approved: outside the budget from then on")
}

// alert: budget.exceeded (detail per_job) at the report that takes a
// job's totals past the limit, once per job.
func TestPerJobAlertLogsOncePerJob(t *testing.T) { // not parallel: enqueue's ids come from one counter
	f := wideFSM(t)
	f.perJobBudget(BudgetRecord{Name: "watch", Scope: wire.BudgetScopeTag, Value: "team=search", PerJobCostNanos: 10, OnExceed: wire.BudgetAlert})
	tags := map[string]string{"team": "search"}
	f.spend("llm", tags, 12, 0) // 6 at the heartbeat, 6 at the ack: the ack crosses
	f.spend("llm", tags, 10, 0) // up to the limit
	f.spend("llm", nil, 50, 0)  // not the tag's
	var alerts []Event
	for _, ev := range f.things() {
		if ev.Type == EvBudgetExceeded {
			require.Equal(t, "watch", ev.Subject)
			require.Equal(t, PerJobDetail, ev.Detail)
			alerts = append(alerts, ev)
		}
	}
	require.Len(t, alerts, 1, "%v", alerts)
}

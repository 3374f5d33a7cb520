package engine

import (
	"errors"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/shard/job"
	"github.com/jobbie/jobbie/shard/keys"
	"github.com/jobbie/jobbie/wire"
)

// spend runs one job of queue with tags to completion, reporting cost
// (nano-dollars) and tokens over a heartbeat and its ack.
func (f *fsmBundle) spend(queue string, tags map[string]string, cost, tokens int64) {
	f.t.Helper()
	id := f.enqueue(&job.Job{Queue: queue, Tags: tags})
	require.Equal(f.t, id, f.fetch(queue).ID)
	half := &AIUsage{CostNanos: cost / 2, Input: tokens / 2}
	require.Equal(f.t, []string{wire.HeartbeatOK}, f.apply(HeartbeatUsage.Type, &HeartbeatCmd{NS: testNS, Jobs: []HeartbeatItem{{ID: id, Usage: half}}}))
	rest := &AIUsage{CostNanos: cost - half.CostNanos, Input: tokens - half.Input}
	require.Equal(f.t, job.Completed, f.apply(AckUsage.Type, &AckCmd{NS: testNS, ID: id, Usage: rest}))
}

func (f *fsmBundle) budget(b BudgetRecord) {
	f.t.Helper()
	_, ok := f.apply(BudgetPut.Type, &BudgetCmd{NS: testNS, Budget: b, Create: true}).(*BudgetRecord)
	require.True(f.t, ok)
}

func (f *fsmBundle) heldBy(id string) string {
	f.t.Helper()
	rec, err := ReadJobAI(f.db, testNS, id)
	require.NoError(f.t, err)
	if rec == nil {
		return ""
	}
	return rec.HeldBy
}

const dollar = wire.AICostScale

func TestBudgetHoldsOnceReachedApproveRunsRejectCancels(t *testing.T) { // not parallel: enqueue's ids come from one counter
	f := setupFSM(t)
	f.now = f.now.Truncate(24 * time.Hour).Add(time.Hour)
	f.budget(BudgetRecord{Name: "daily", Scope: wire.BudgetScopeNamespace, DailyCostNanos: dollar, OnExceed: wire.BudgetHold})
	f.spend("llm", nil, dollar*6/10, 10)
	below := f.enqueue(&job.Job{Queue: "llm"})
	require.Equal(t, job.Pending, f.job(below).State, "under the budget: runs")
	f.advance(time.Hour)
	f.spend("other", nil, dollar*5/10, 10) // $1.10 today: reached
	held := f.enqueue(&job.Job{Queue: "llm"})
	require.Equal(t, job.Held, f.job(held).State)
	require.Equal(t, "daily", f.heldBy(held))
	rejected := f.enqueue(&job.Job{Queue: "llm"})

	require.Equal(t, job.Pending, f.apply(JobApprove.Type, &JobOpCmd{NS: testNS, ID: held}))
	require.Equal(t, "", f.heldBy(held))
	// The fetch holds the job pending since before the budget was reached,
	// and leases the approved one, outside the budget.
	require.Equal(t, held, f.fetch("llm").ID)
	require.Equal(t, job.Held, f.job(below).State)
	require.Equal(t, "daily", f.heldBy(below))
	require.Equal(t, job.Cancelled, f.apply(JobReject.Type, &JobOpCmd{NS: testNS, ID: rejected}))
	require.Equal(t, CancelBudgetRejected, f.job(rejected).CancelReason)

	// Only a job a budget holds may be approved or rejected.
	for _, id := range []string{held, rejected} {
		err, _ := f.apply(JobApprove.Type, &JobOpCmd{NS: testNS, ID: id}).(error)
		require.True(t, isCode(err, apierr.Conflict), "%s: %v", id, err)
		err, _ = f.apply(JobReject.Type, &JobOpCmd{NS: testNS, ID: id}).(error)
		require.True(t, isCode(err, apierr.Conflict), "%s: %v", id, err)
	}
	// A job held for its dependencies is not the budget's.
	dep := f.enqueue(&job.Job{Queue: "llm", DependsOn: []string{held}})
	require.Equal(t, job.Held, f.job(dep).State)
	require.Equal(t, "", f.heldBy(dep))
	// Approved at its fetch, it runs too.
	require.Equal(t, job.Pending, f.apply(JobApprove.Type, &JobOpCmd{NS: testNS, ID: below}))
	require.Equal(t, below, f.fetch("llm").ID)

	// The next UTC day starts from nothing.
	f.now = f.now.Truncate(24 * time.Hour).Add(24 * time.Hour)
	require.Equal(t, job.Pending, f.job(f.enqueue(&job.Job{Queue: "llm"})).State)
}

func TestBudgetRejectRefusesTheEnqueueOfItsScope(t *testing.T) { // not parallel: enqueue's ids come from one counter
	f := setupFSM(t)
	f.budget(BudgetRecord{Name: "llm-tokens", Scope: wire.BudgetScopeQueue, Value: "llm", DailyTokens: 100, OnExceed: wire.BudgetReject})
	f.spend("llm", nil, 0, 100)
	j := &job.Job{ID: f.e.newIDForTest(), Queue: "llm", Backoff: job.BackoffFixed}
	err, _ := f.apply(Enqueue.Type, &EnqueueCmd{NS: testNS, Jobs: [][]byte{j.Encode()}}).(error)
	require.True(t, isCode(err, apierr.BudgetExceeded), "%v", err)
	require.Contains(t, err.Error(), `"llm-tokens"`)
	require.False(t, f.has(keys.Job(testNS, j.ID)), "nothing stored")
	require.Equal(t, job.Pending, f.job(f.enqueue(&job.Job{Queue: "other"})).State, "another queue is not the budget's")
}

func TestBudgetAlertLogsOncePerDay(t *testing.T) { // not parallel: enqueue's ids come from one counter
	f := wideFSM(t)
	f.budget(BudgetRecord{Name: "team", Scope: wire.BudgetScopeTag, Value: "team=search", DailyCostNanos: 5, OnExceed: wire.BudgetAlert})
	tags := map[string]string{"team": "search"}
	f.spend("llm", tags, 5, 0)
	first := f.enqueue(&job.Job{Queue: "llm", Tags: tags})
	f.enqueue(&job.Job{Queue: "llm", Tags: tags})
	f.enqueue(&job.Job{Queue: "llm"}) // not the tag's
	require.Equal(t, job.Pending, f.job(first).State, "alert does not hold")
	var alerts []Event
	for _, ev := range f.things() {
		if ev.Type == EvBudgetExceeded {
			ev.At = 0
			alerts = append(alerts, ev)
		}
	}
	require.Equal(t, []Event{{Type: EvBudgetExceeded, Subject: "team", Queue: "llm", JobID: first, Detail: wire.BudgetScopeTag}}, alerts)
}

func TestBudgetPutAndDelete(t *testing.T) {
	t.Parallel()
	f := setupFSM(t)
	b := BudgetRecord{Name: "b", Scope: wire.BudgetScopeNamespace, DailyTokens: 5, OnExceed: wire.BudgetHold}
	f.budget(b)
	err, _ := f.apply(BudgetPut.Type, &BudgetCmd{NS: testNS, Budget: b, Create: true}).(error)
	require.True(t, isCode(err, apierr.Conflict), "%v", err)
	err, _ = f.apply(BudgetPut.Type, &BudgetCmd{NS: testNS, Budget: BudgetRecord{Name: "nope", Scope: wire.BudgetScopeNamespace}}).(error)
	require.True(t, isCode(err, apierr.NotFound), "%v", err)
	b.DailyTokens = 7
	require.EqualValues(t, 7, f.apply(BudgetPut.Type, &BudgetCmd{NS: testNS, Budget: b}).(*BudgetRecord).DailyTokens)
	require.Nil(t, f.apply(BudgetDelete.Type, &BudgetNameCmd{NS: testNS, Name: "b"}))
	require.Empty(t, ReadBudgets(f.db, testNS))
	err, _ = f.apply(BudgetDelete.Type, &BudgetNameCmd{NS: testNS, Name: "b"}).(error)
	require.True(t, isCode(err, apierr.NotFound), "%v", err)
}

func isCode(err error, c apierr.Code) bool { return errors.Is(err, apierr.New(c, "")) }

// A schedule's run is the engine's enqueue: a reached budget, even one
// that rejects, lets it through.
func TestBudgetLeavesScheduleRunsAlone(t *testing.T) { // not parallel: enqueue's ids come from one counter
	f := setupFSM(t)
	f.budget(BudgetRecord{Name: "all", Scope: wire.BudgetScopeNamespace, DailyTokens: 1, OnExceed: wire.BudgetReject})
	f.spend("llm", nil, 0, 1)
	sc := f.apply(ScheduleCreate.Type, &ScheduleCmd{NS: testNS, Sched: Schedule{ID: "sch_00000000000000000000000001", Name: "nightly",
		Queue: "llm", Cron: "* * * * *", Enabled: true, NextRun: f.now.UnixNano()}}).(*Schedule)
	id := f.e.newIDForTest()
	require.Equal(t, true, f.apply(ScheduleFire.Type, &FireCmd{NS: testNS, ID: sc.ID, RunAt: sc.NextRun, NextRun: sc.NextRun + int64(time.Minute), JobID: id}))
	require.Equal(t, job.Pending, f.job(id).State)
}

// A fetch batch reads its namespace's hold budgets' spend once, not once
// per job: a budget's spend is up to 24 hourly counters, and a batch of
// 100 read them 100 times (4.5× the apply's cost per job). Counted in
// allocations, which the reads make and the clock does not sway.
func TestFetchBatchReadsBudgetsOnce(t *testing.T) { // not parallel: enqueue's ids come from one counter
	f := setupFSM(t)
	f.now = f.now.Truncate(24 * time.Hour).Add(time.Hour)
	f.spend("llm", nil, dollar/10, 10)
	f.advance(22 * time.Hour) // 24 hourly counters in today's spend
	for range 200 {
		f.enqueue(&job.Job{Queue: "q"})
	}
	mallocs := func() uint64 {
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.Mallocs
	}
	fetch := func() uint64 {
		before := mallocs()
		require.Len(t, f.fetchBatch(100, "q"), 100)
		return mallocs() - before
	}
	plain := fetch()
	f.budget(BudgetRecord{Name: "daily", Scope: wire.BudgetScopeNamespace, DailyCostNanos: dollar, OnExceed: wire.BudgetHold})
	budgeted := fetch()
	// The process's allocation count includes other goroutines', so the
	// bound is loose: a read of the spend per job was about 11 times as
	// many as without a budget.
	require.Less(t, budgeted, 2*plain, "a fetch batch of 100 with a budget allocated %d, without %d", budgeted, plain)
}

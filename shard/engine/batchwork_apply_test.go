package engine

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/shard/job"
)

func (f *fsmBundle) fetchBatch(max int, queues ...string) []*job.Job {
	f.t.Helper()
	c := &FetchBatchCmd{Max: max, Fetch: FetchCmd{NS: testNS, Queues: queues, WorkerID: "w", LeaseNs: int64(10 * time.Second)}}
	return f.apply(FetchBatch.Type, c).([]*job.Job)
}

func ids(jobs []*job.Job) []string {
	out := make([]string, len(jobs))
	for i, j := range jobs {
		out[i] = j.ID
	}
	return out
}

func TestApplyFetchBatchLeasesDistinctJobsInOrder(t *testing.T) {
	f := setupFSM(t)
	n1 := f.enqueue(&job.Job{Queue: "q", Priority: job.Normal})
	f.advance(time.Millisecond)
	h1 := f.enqueue(&job.Job{Queue: "q", Priority: job.High})
	f.advance(time.Millisecond)
	n2 := f.enqueue(&job.Job{Queue: "q2", Priority: job.Normal})
	f.advance(time.Millisecond)
	c1 := f.enqueue(&job.Job{Queue: "q2", Priority: job.Critical})
	f.advance(time.Millisecond)
	n3 := f.enqueue(&job.Job{Queue: "q", Priority: job.Normal})

	got := f.fetchBatch(3, "q", "q2")
	require.Equal(t, []string{c1, h1, n1}, ids(got))
	for _, j := range got {
		require.Equal(t, job.Active, f.job(j.ID).State)
		require.Equal(t, 1, j.Attempt)
		require.Equal(t, "w", j.WorkerID)
		require.Equal(t, f.now.Add(10*time.Second).UnixNano(), j.LeaseUntil)
	}
	got = f.fetchBatch(10, "q", "q2")
	require.Equal(t, []string{n2, n3}, ids(got), "the rest, none twice")
	require.Empty(t, f.fetchBatch(10, "q", "q2"))
	require.EqualValues(t, 3, f.counts("q")[job.Active])
	require.EqualValues(t, 2, f.counts("q2")[job.Active])
}

func TestApplyAckBatchSettlesEachAndReportsErrors(t *testing.T) {
	f := setupFSM(t)
	a := f.enqueue(&job.Job{Queue: "q"})
	b := f.enqueue(&job.Job{Queue: "q"})
	f.fetchBatch(2, "q")
	pending := f.enqueue(&job.Job{Queue: "q"})
	missing := f.e.newIDForTest()

	out := f.apply(AckBatch.Type, &AckBatchCmd{NS: testNS, WorkerID: "w", Items: []AckBatchItem{
		{ID: a, Result: []byte(`{"n":1}`)}, {ID: pending}, {ID: missing}, {ID: b}, {ID: a},
	}}).([]AckOutcome)
	require.Len(t, out, 5)
	require.Equal(t, AckOutcome{State: job.Completed}, out[0])
	require.Equal(t, apierr.LeaseMismatch, out[1].Err.Code)
	require.Equal(t, apierr.NotFound, out[2].Err.Code)
	require.Equal(t, AckOutcome{State: job.Completed}, out[3])
	require.Equal(t, apierr.LeaseMismatch, out[4].Err.Code, "a second ack of the same job in one batch")

	require.Equal(t, job.Completed, f.job(a).State)
	require.JSONEq(t, `{"n":1}`, string(f.job(a).Result))
	require.Equal(t, job.Completed, f.job(b).State)
	require.Equal(t, job.Pending, f.job(pending).State, "a refused ack changes nothing")
	require.EqualValues(t, 2, f.counts("q")[job.Completed])

	// Another worker's batch acks nothing of w's.
	c := f.enqueue(&job.Job{Queue: "q3"})
	f.fetchBatch(1, "q3")
	out = f.apply(AckBatch.Type, &AckBatchCmd{NS: testNS, WorkerID: "other", Items: []AckBatchItem{{ID: c}}}).([]AckOutcome)
	require.Equal(t, apierr.LeaseMismatch, out[0].Err.Code)
	require.Equal(t, job.Active, f.job(c).State)
}

package engine

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/shard/job"
)

func (f *fsmBundle) fetchNamed(worker string, named bool) *job.Job {
	f.t.Helper()
	c := &FetchCmd{NS: testNS, Queues: []string{"q"}, WorkerID: worker, LeaseNs: int64(10 * time.Second), Named: named}
	return f.apply(Fetch.Type, c).(*job.Job)
}

// A release takes the attempt back, and the entries' clock may stand
// still (a lagging new leader is held at the last stamp): a fetch that
// hands out tokens still gives the next lease a name of its own.
func TestLeaseAfterReleaseAtAStillClockIsNew(t *testing.T) {
	f := setupFSM(t)
	id := f.enqueue(&job.Job{Queue: "q"})
	first := job.LeaseOf(f.fetchNamed("a", true))
	f.apply(Release.Type, &ReleaseCmd{NS: testNS, WorkerID: "a", Jobs: []ReleaseItem{{ID: id, Attempt: 1, Lease: first}}})
	second := job.LeaseOf(f.fetchNamed("b", true)) // same entry clock
	require.Equal(t, first.Attempt, second.Attempt)
	require.NotEqual(t, first, second)
	require.Equal(t, first.At+1, second.At)
	require.Equal(t, f.now.Add(10*time.Second).UnixNano(), f.job(id).LeaseUntil, "the lease still runs from the entry's clock")

	// The first lease's name settles nothing of the second's, with or
	// without a worker id; nothing changes.
	err := f.apply(Ack.Type, &AckCmd{NS: testNS, ID: id, Lease: first}).(*apierr.Error)
	require.Equal(t, apierr.LeaseMismatch, err.Code)
	err = f.apply(Fail.Type, &FailCmd{NS: testNS, ID: id, WorkerID: "b", Error: "x", Lease: first}).(*apierr.Error)
	require.Equal(t, apierr.LeaseMismatch, err.Code)
	hb := f.apply(Heartbeat.Type, &HeartbeatCmd{NS: testNS, Jobs: []HeartbeatItem{{ID: id, Progress: []byte(`{"n":1}`), Lease: first}}}).([]string)
	require.Equal(t, []string{"lost"}, hb)
	rel := f.apply(Release.Type, &ReleaseCmd{NS: testNS, WorkerID: "b", Jobs: []ReleaseItem{{ID: id, Attempt: 1, Lease: first}}}).([]bool)
	require.Equal(t, []bool{false}, rel)
	out := f.apply(AckBatch.Type, &AckBatchCmd{NS: testNS, Items: []AckBatchItem{{ID: id, Lease: first}}}).([]AckOutcome)
	require.Equal(t, apierr.LeaseMismatch, out[0].Err.Code)
	j := f.job(id)
	require.Equal(t, job.Active, j.State)
	require.Equal(t, "b", j.WorkerID)
	require.Nil(t, j.Progress)
	require.Empty(t, j.Errors)

	// The second's settles it.
	require.Equal(t, job.Completed, f.apply(Ack.Type, &AckCmd{NS: testNS, ID: id, Lease: second}))
}

// Entries from before tokens (no Named) lease as they did: the same
// release and fetch at a still clock repeat the pair, which is why the
// fetches that hand out tokens are Named.
func TestUnnamedFetchLeasesAsBefore(t *testing.T) {
	f := setupFSM(t)
	id := f.enqueue(&job.Job{Queue: "q"})
	first := job.LeaseOf(f.fetchNamed("a", false))
	require.Equal(t, f.now.UnixNano(), first.At)
	f.apply(Release.Type, &ReleaseCmd{NS: testNS, WorkerID: "a", Jobs: []ReleaseItem{{ID: id, Attempt: 1}}})
	require.Equal(t, first, job.LeaseOf(f.fetchNamed("b", false)))
}

// A command that names no lease encodes as it did before leases were
// named, so logs written since replay as logs written before.
func TestCommandsWithoutALeaseEncodeAsBefore(t *testing.T) {
	type ackBefore struct {
		NS       string `codec:"ns"`
		ID       string `codec:"id"`
		WorkerID string `codec:"w"`
		Result   []byte `codec:"r"`
		Step     string `codec:"st,omitempty"`
	}
	require.Equal(t, replica.Encode(&ackBefore{NS: testNS, ID: "job_1", WorkerID: "w"}),
		replica.Encode(&AckCmd{NS: testNS, ID: "job_1", WorkerID: "w"}))
	type releaseItemBefore struct {
		ID      string `codec:"id"`
		Attempt int    `codec:"a"`
	}
	require.Equal(t, replica.Encode(&releaseItemBefore{ID: "job_1", Attempt: 2}), replica.Encode(&ReleaseItem{ID: "job_1", Attempt: 2}))
}

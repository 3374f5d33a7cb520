package live

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/shard/job"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// A cancel wakes the waiting fetch of the job's worker alone, once the
// entry commits; its answer takes the cancel once; a job that settles
// before it is told is never told; a job leased before the node started
// is told all the same.
func TestCancelIsTheNewsOfItsWorkerAlone(t *testing.T) {
	t.Parallel()
	ws, obs, clock := setupWorkers(t)
	cancels := ws.CancelObserver()
	apply := func(f func(tx *replica.Tx)) {
		tx := replica.NewTx(nil, clock.Now(), 1)
		f(tx)
		tx.RunAfterCommit()
	}
	leased := func(id, queue, worker string) *job.Job {
		j := &job.Job{ID: id, Queue: queue, State: job.Active, WorkerID: worker, Attempt: 1, StartedAt: 42}
		apply(func(tx *replica.Tx) { obs(tx, testNS, j, job.Pending) })
		return j
	}
	ws.Seen(testNS, "w1", "h", []string{"q", "other"})
	ws.Seen(testNS, "w2", "h", []string{"q"})
	a := leased("job_a", "q", "w1")
	leased("job_b", "q", "w2")

	w1, w2 := ws.News(testNS, "w1", tenancy.AllQueues()), ws.News(testNS, "w2", tenancy.AllQueues())
	ch1, now := w1()
	require.False(t, now)
	ch2, _ := w2()

	tx := replica.NewTx(nil, clock.Now(), 1)
	cancels(tx, testNS, a)
	select {
	case <-ch1:
		t.Fatal("woken before the entry committed")
	default:
	}
	tx.RunAfterCommit()
	<-ch1
	select {
	case <-ch2:
		t.Fatal("another worker woken")
	default:
	}
	_, now = w1()
	require.True(t, now)
	_, now = ws.News(testNS, "w1", tenancy.ParseQueueScope("other"))()
	require.False(t, now, "a scope without the job's queue has no news")
	require.Nil(t, ws.TakeCancels(testNS, "w1", tenancy.ParseQueueScope("other")))
	require.Nil(t, ws.TakeCancels("t_01hx0000000000000000000001/default", "w1", tenancy.AllQueues()))
	require.Equal(t, []wire.JobCancel{{JobID: "job_a", LeaseToken: job.LeaseOf(a).Token()}}, ws.TakeCancels(testNS, "w1", tenancy.AllQueues()))
	require.Nil(t, ws.TakeCancels(testNS, "w1", tenancy.AllQueues()), "told once")

	// Settled before any fetch told it: nothing is kept.
	c := leased("job_c", "q", "w1")
	apply(func(tx *replica.Tx) { cancels(tx, testNS, c) })
	apply(func(tx *replica.Tx) {
		c.State = job.Cancelled
		obs(tx, testNS, c, job.Active)
	})
	_, now = w1()
	require.False(t, now)
	require.Nil(t, ws.TakeCancels(testNS, "w1", tenancy.AllQueues()))

	// Leased before this node started (it never applied the lease).
	d := &job.Job{ID: "job_d", Queue: "q", State: job.Active, WorkerID: "w3", Attempt: 2, StartedAt: 7}
	apply(func(tx *replica.Tx) { cancels(tx, testNS, d) })
	require.Equal(t, []wire.JobCancel{{JobID: "job_d", LeaseToken: job.LeaseOf(d).Token()}}, ws.TakeCancels(testNS, "w3", tenancy.AllQueues()))
}

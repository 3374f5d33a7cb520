package live

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/shard/engine"
	"github.com/jobbie/jobbie/shard/job"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

const testNS = "t_01hx0000000000000000000000/default"

func setupWorkers(t *testing.T) (*Workers, engine.Observer, *clockwork.FakeClock) {
	t.Helper()
	clock := clockwork.NewFakeClockAt(time.Unix(1_800_000_000, 0).UTC())
	ws := NewWorkers(clock)
	return ws, ws.Observer(), clock
}

func TestWorkersGoneThenDropped(t *testing.T) {
	t.Parallel()
	ws, _, clock := setupWorkers(t)
	ws.Seen(testNS, "w1", "host1", []string{"emails", "sms"})
	ws.Seen(testNS, "w2", "host2", []string{"emails"})
	list := ws.List(testNS, tenancy.AllQueues())
	require.Len(t, list, 2)
	require.Equal(t, wire.Worker{ID: "w1", Hostname: "host1", Queues: []string{"emails", "sms"}, ActiveJobIDs: []string{},
		LastSeen: clock.Now(), Status: "active"}, list[0])

	clock.Advance(WorkerGoneAfter - time.Second)
	ws.Seen(testNS, "w2", "", nil) // a heartbeat keeps hostname and queues
	clock.Advance(time.Second)
	list = ws.List(testNS, tenancy.AllQueues())
	require.Equal(t, "gone", list[0].Status, "w1 unseen for 2 minutes")
	require.Equal(t, "active", list[1].Status)
	require.Equal(t, "host2", list[1].Hostname)
	require.Equal(t, []string{"emails"}, list[1].Queues)

	clock.Advance(WorkerDropAfter - WorkerGoneAfter)
	list = ws.List(testNS, tenancy.AllQueues())
	require.Len(t, list, 1, "w1 forgotten after 30 minutes")
	require.Equal(t, "w2", list[0].ID)
	require.Equal(t, "gone", list[0].Status)
	require.Empty(t, ws.List("t_01hx0000000000000000000001/default", tenancy.AllQueues()), "another namespace has none")
}

func TestWorkerActiveJobsFollowLeasesAndSettles(t *testing.T) {
	t.Parallel()
	ws, obs, clock := setupWorkers(t)
	move := func(id string, from, to job.State, worker string) { // one applied entry
		tx := replica.NewTx(nil, clock.Now(), 1)
		obs(tx, testNS, &job.Job{ID: id, Queue: "q", State: to, WorkerID: worker}, from)
		tx.RunAfterCommit()
	}
	move("job_a", job.Pending, job.Active, "w1") // applied before the fetch handler sees the worker
	ws.Seen(testNS, "w1", "host1", []string{"q"})
	move("job_b", job.Pending, job.Active, "w1")
	move("job_c", job.Pending, job.Active, "w2")
	list := ws.List(testNS, tenancy.AllQueues())
	require.Equal(t, 2, list[0].ActiveJobs)
	require.Equal(t, []string{"job_a", "job_b"}, list[0].ActiveJobIDs)
	require.Equal(t, "host1", list[0].Hostname)
	require.Equal(t, 1, list[1].ActiveJobs, "a worker known only from its fetches")

	move("job_a", job.Active, job.Completed, "w1")
	move("job_b", job.Active, job.Pending, "") // lease expired: the record no longer names the worker
	move("job_c", job.Active, job.Retrying, "w2")
	for _, w := range ws.List(testNS, tenancy.AllQueues()) {
		require.Zero(t, w.ActiveJobs, w.ID)
	}
}

func TestWorkerLabelsAndCountAreBounded(t *testing.T) {
	t.Parallel()
	ws, _, clock := setupWorkers(t)
	ws.Seen(testNS, strings.Repeat("x", wire.MaxWorkerID+1), "h", nil)
	ws.Seen(testNS, "w", strings.Repeat("h", wire.MaxWorkerID+1), nil)
	ws.Seen(testNS, "w", "h", []string{"bad queue name!"})
	ws.Seen(testNS, "", "h", nil)
	require.Empty(t, ws.List(testNS, tenancy.AllQueues()), "overlong or invalid labels are not recorded")

	for i := 0; i < maxWorkersPerNS+5; i++ {
		ws.Seen(testNS, fmt.Sprintf("w%05d", i), "h", nil)
		clock.Advance(time.Millisecond)
	}
	list := ws.List(testNS, tenancy.AllQueues())
	require.Len(t, list, maxWorkersPerNS)
	require.Equal(t, "w00005", list[0].ID, "the least recently seen were forgotten")
}

// Under a limited scope a worker shows only its queues and active jobs in
// it; a worker with nothing in it is not listed.
func TestWorkersListedWithinAScope(t *testing.T) {
	t.Parallel()
	ws, obs, clock := setupWorkers(t)
	lease := func(id, queue, worker string) {
		tx := replica.NewTx(nil, clock.Now(), 1)
		obs(tx, testNS, &job.Job{ID: id, Queue: queue, State: job.Active, WorkerID: worker}, job.Pending)
		tx.RunAfterCommit()
	}
	ws.Seen(testNS, "both", "h", []string{"emails.send", "billing"})
	ws.Seen(testNS, "billing-only", "h", []string{"billing"})
	lease("job_e", "emails.send", "both")
	lease("job_b", "billing", "both")
	lease("job_x", "billing", "billing-only")

	list := ws.List(testNS, tenancy.ParseQueueScope("emails.*"))
	require.Len(t, list, 1)
	require.Equal(t, "both", list[0].ID)
	require.Equal(t, []string{"emails.send"}, list[0].Queues)
	require.Equal(t, 1, list[0].ActiveJobs)
	require.Equal(t, []string{"job_e"}, list[0].ActiveJobIDs)

	require.Empty(t, ws.List(testNS, tenancy.ParseQueueScope("")), "no queue: no worker")
	all := ws.List(testNS, tenancy.AllQueues())
	require.Len(t, all, 2)
	require.Equal(t, []string{"emails.send", "billing"}, all[1].Queues, "every queue: as seen")
	require.Equal(t, 2, all[1].ActiveJobs)
}

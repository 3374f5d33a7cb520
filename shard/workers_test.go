package shard

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/shard/job"
)

// fakeClock is a clock tests move by hand.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

func setupWorkers(t *testing.T) (*workerSet, moveObserver, *fakeClock) {
	t.Helper()
	clock := &fakeClock{now: time.Unix(1_800_000_000, 0).UTC()}
	e := &Engine{workers: newWorkerSet(clock.Now)}
	return e.workers, e.workerObserver(), clock
}

func TestWorkersGoneThenDropped(t *testing.T) {
	t.Parallel()
	ws, _, clock := setupWorkers(t)
	ws.seen(testNS, "w1", "host1", []string{"emails", "sms"})
	ws.seen(testNS, "w2", "host2", []string{"emails"})
	list := ws.list(testNS)
	require.Len(t, list, 2)
	require.Equal(t, WorkerInfo{ID: "w1", Hostname: "host1", Queues: []string{"emails", "sms"}, ActiveJobIDs: []string{},
		LastSeen: clock.Now(), Status: "active"}, list[0])

	clock.advance(WorkerGoneAfter - time.Second)
	ws.seen(testNS, "w2", "", nil) // a heartbeat keeps hostname and queues
	clock.advance(time.Second)
	list = ws.list(testNS)
	require.Equal(t, "gone", list[0].Status, "w1 unseen for 2 minutes")
	require.Equal(t, "active", list[1].Status)
	require.Equal(t, "host2", list[1].Hostname)
	require.Equal(t, []string{"emails"}, list[1].Queues)

	clock.advance(WorkerDropAfter - WorkerGoneAfter)
	list = ws.list(testNS)
	require.Len(t, list, 1, "w1 forgotten after 30 minutes")
	require.Equal(t, "w2", list[0].ID)
	require.Equal(t, "gone", list[0].Status)
	require.Empty(t, ws.list("t_01hx0000000000000000000001/default"), "another namespace has none")
}

func TestWorkerActiveJobsFollowLeasesAndSettles(t *testing.T) {
	t.Parallel()
	ws, obs, clock := setupWorkers(t)
	tx := replica.NewTx(nil, clock.Now(), 1)
	move := func(id string, from, to job.State, worker string) {
		obs(tx, testNS, &job.Job{ID: id, Queue: "q", State: to, WorkerID: worker}, from)
	}
	move("job_a", job.Pending, job.Active, "w1") // applied before the fetch handler sees the worker
	ws.seen(testNS, "w1", "host1", []string{"q"})
	move("job_b", job.Pending, job.Active, "w1")
	move("job_c", job.Pending, job.Active, "w2")
	list := ws.list(testNS)
	require.Equal(t, 2, list[0].ActiveJobs)
	require.Equal(t, []string{"job_a", "job_b"}, list[0].ActiveJobIDs)
	require.Equal(t, "host1", list[0].Hostname)
	require.Equal(t, 1, list[1].ActiveJobs, "a worker known only from its fetches")

	move("job_a", job.Active, job.Completed, "w1")
	move("job_b", job.Active, job.Pending, "") // lease expired: the record no longer names the worker
	move("job_c", job.Active, job.Retrying, "w2")
	for _, w := range ws.list(testNS) {
		require.Zero(t, w.ActiveJobs, w.ID)
	}
}

func TestWorkerLabelsAndCountAreBounded(t *testing.T) {
	t.Parallel()
	ws, _, clock := setupWorkers(t)
	ws.seen(testNS, strings.Repeat("x", maxWorkerID+1), "h", nil)
	ws.seen(testNS, "w", strings.Repeat("h", maxWorkerID+1), nil)
	ws.seen(testNS, "w", "h", []string{"bad queue name!"})
	ws.seen(testNS, "", "h", nil)
	require.Empty(t, ws.list(testNS), "overlong or invalid labels are not recorded")

	for i := 0; i < maxWorkersPerNS+5; i++ {
		ws.seen(testNS, fmt.Sprintf("w%05d", i), "h", nil)
		clock.advance(time.Millisecond)
	}
	list := ws.list(testNS)
	require.Len(t, list, maxWorkersPerNS)
	require.Equal(t, "w00005", list[0].ID, "the least recently seen were forgotten")
}

package engine

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/shard/job"
	"github.com/jobbie/jobbie/shard/keys"
)

// enqueueIn enqueues jobs into ns in one command and returns their ids.
func (f *fsmBundle) enqueueIn(ns string, c *EnqueueCmd, jobs ...*job.Job) []string {
	f.t.Helper()
	c.NS = ns
	for _, j := range jobs {
		if j.ID == "" {
			j.ID = f.e.newIDForTest()
		}
		if j.Backoff == "" {
			j.Backoff, j.BaseDelay, j.MaxDelay = job.BackoffFixed, int64(time.Second), int64(time.Minute)
		}
		c.Jobs = append(c.Jobs, j.Encode())
		c.Deps = c.Deps || len(j.DependsOn) > 0
	}
	res, ok := f.apply(Enqueue.Type, c).([]EnqueueResult)
	require.True(f.t, ok)
	ids := make([]string, len(res))
	for i, r := range res {
		ids[i] = r.JobID
	}
	return ids
}

// populate gives ns a bit of everything a namespace holds: jobs in every
// state with their indexes, tags, a unique lock, a batch, a dependency, a
// configured queue, a schedule, a bulk operation and its own retention.
func (f *fsmBundle) populate(ns string, tag int) {
	f.t.Helper()
	ids := f.enqueueIn(ns, &EnqueueCmd{Batch: &BatchRecord{ID: fmt.Sprintf("batch_%028d", tag), CallbackQueue: "done"}},
		&job.Job{Queue: "q", Tags: map[string]string{"k": "v"}},
		&job.Job{Queue: "q", UniqueKey: "u", UniqueUntil: int64(time.Hour)},
		&job.Job{Queue: "q", ExpireAfter: int64(time.Hour)},
		&job.Job{Queue: "other", ScheduledAt: f.now.Add(time.Hour).UnixNano()})
	f.enqueueIn(ns, &EnqueueCmd{}, &job.Job{Queue: "q", DependsOn: []string{ids[3]}})
	a := f.apply(Fetch.Type, &FetchCmd{NS: ns, Queues: []string{"q"}, WorkerID: "w", LeaseNs: int64(time.Minute)}).(*job.Job)
	require.Equal(f.t, job.Completed, f.apply(Ack.Type, &AckCmd{NS: ns, ID: a.ID}))
	d := f.apply(Fetch.Type, &FetchCmd{NS: ns, Queues: []string{"q"}, WorkerID: "w", LeaseNs: int64(time.Minute)}).(*job.Job)
	f.apply(Fail.Type, &FailCmd{NS: ns, ID: d.ID, Error: "boom"})
	f.apply(Fetch.Type, &FetchCmd{NS: ns, Queues: []string{"q"}, WorkerID: "w", LeaseNs: int64(time.Minute)})
	require.Nil(f.t, f.apply(QueueConfigure.Type, &QueueConfigCmd{NS: ns, Queue: "q", Description: "d", Paused: true, Max: 2,
		Rate: 3, Period: int64(time.Second), Defaults: QueueDefaults{Retention: int64(time.Hour)}}))
	f.apply(ScheduleCreate.Type, &ScheduleCmd{NS: ns, Sched: Schedule{ID: fmt.Sprintf("sch_%026d", tag), Name: "nightly",
		Queue: "q", Cron: "@every 1m", Timezone: "UTC", Enabled: true, NextRun: f.now.Add(time.Minute).UnixNano()}})
	f.apply(BulkCreate.Type, &BulkOpCmd{NS: ns, Op: &BulkOp{ID: fmt.Sprintf("bulk_%027d", tag), Action: job.BulkRetry, Filter: []byte(`{}`)}})
	require.Nil(f.t, f.apply(NamespaceConfigure.Type, &NamespaceConfigCmd{NS: ns, Config: NamespaceConfig{Retention: int64(time.Hour)}}))
}

// dump is every key and value under prefix p, and the registry entry of ns.
func (f *fsmBundle) dump(ns string) []byte {
	f.t.Helper()
	var buf bytes.Buffer
	p := keys.Namespace(ns)
	it, err := f.db.NewIter(nil)
	require.NoError(f.t, err)
	for ok := it.First(); ok; ok = it.Next() {
		if bytes.HasPrefix(it.Key(), p) || bytes.Equal(it.Key(), keys.Registry(ns)) {
			fmt.Fprintf(&buf, "%x=%x\n", it.Key(), it.Value())
		}
	}
	require.NoError(f.t, it.Close())
	return buf.Bytes()
}

// purge runs purge steps on ns until one says done, and returns how many.
func (f *fsmBundle) purge(ns string, between func(step int)) int {
	f.t.Helper()
	c := &NamespacePurgeCmd{NS: ns}
	for n := 1; n < 10_000; n++ {
		st := f.apply(NamespacePurge.Type, c).(*PurgeStep)
		require.LessOrEqual(f.t, st.Removed, max(f.e.purgeStep, queueStepRemove))
		if st.Done {
			return n
		}
		c.Phase, c.After = st.Phase, st.Next
		if between != nil {
			between(n)
		}
	}
	f.t.Fatal("the purge never ended")
	return 0
}

// Not parallel: newIDForTest shares a counter with the other apply tests.
func TestApplyNamespacePurge(t *testing.T) {
	f := setupFSM(t)
	f.e.purgeStep = 7 // many small steps
	f.populate(testNS, 1)
	f.populate(otherNS, 2)
	other := f.dump(otherNS)
	require.NotEmpty(t, other)
	require.NotEmpty(t, f.dump(testNS))

	steps := f.purge(testNS, nil)
	require.Greater(t, steps, 2, "the purge went in bounded steps")
	require.Empty(t, f.dump(testNS), "nothing of the namespace is left, its registry entry included")
	require.Equal(t, string(other), string(f.dump(otherNS)), "another namespace is untouched, byte for byte")

	// The namespace starts afresh: a queue of the same name has no
	// settings, counts only its new job, and hands it out.
	id := f.enqueue(&job.Job{Queue: "q"})
	q := f.queue("q")
	require.False(t, q.Paused)
	require.Zero(t, q.MaxActive)
	require.Nil(t, q.Throttle)
	require.Nil(t, q.Defaults)
	require.Empty(t, q.Description)
	require.EqualValues(t, 1, q.Count(job.Pending))
	require.Equal(t, id, f.fetch("q").ID)
	_, err := ReadSchedule(f.db, testNS, fmt.Sprintf("sch_%026d", 1))
	require.Error(t, err)

	// Purging the other namespace too leaves nothing of either.
	f.purge(otherNS, nil)
	require.Empty(t, f.dump(otherNS))
}

// Jobs enqueued while a purge runs go with the rest: the purge goes back to
// them before it deletes anything else, so no index names a missing job.
func TestApplyNamespacePurgeTakesJobsThatCameMeanwhile(t *testing.T) {
	f := setupFSM(t)
	f.e.purgeStep = 3
	f.populate(testNS, 3)
	late := 0
	f.purge(testNS, func(step int) {
		if step%2 == 0 && late < 5 {
			late++
			f.enqueueIn(testNS, &EnqueueCmd{}, &job.Job{Queue: "q"}, &job.Job{Queue: "late", Tags: map[string]string{"a": "b"}})
		}
	})
	require.Equal(t, 5, late)
	require.Empty(t, f.dump(testNS))
}

// A namespace of more jobs than a step removes takes several steps of
// bounded size.
func TestApplyNamespacePurgeBoundsItsSteps(t *testing.T) {
	f := setupFSM(t)
	for range 3 {
		jobs := make([]*job.Job, 1000)
		for i := range jobs {
			jobs[i] = &job.Job{Queue: "bulk"}
		}
		f.enqueueIn(testNS, &EnqueueCmd{}, jobs...)
	}
	c := &NamespacePurgeCmd{NS: testNS}
	st := f.apply(NamespacePurge.Type, c).(*PurgeStep)
	require.Equal(t, queueStepRemove, st.Removed)
	require.NotNil(t, st.Next)
	require.EqualValues(t, 2000, f.queue("bulk").Count(job.Pending), "counts follow the jobs removed")
	require.Equal(t, 3, f.purge(testNS, nil), "two more steps of jobs, one of the rest")
	require.Empty(t, f.dump(testNS))
}

package engine

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/shard/job"
	"github.com/jobbie/jobbie/shard/keys"
)

const (
	sch1 = "sch_00000000000000000000000001"
	sch2 = "sch_00000000000000000000000002"
)

func (f *fsmBundle) createSchedule(id, name string, next time.Time) *Schedule {
	f.t.Helper()
	res := f.apply(ScheduleCreate.Type, &ScheduleCmd{NS: testNS, Sched: Schedule{
		ID: id, Name: name, Queue: "cron.q", Cron: "@every 1m", Timezone: "UTC", Payload: []byte(`{"n":1}`),
		Priority: job.High, UniqueKey: "", MaxRetries: 2, Enabled: true, NextRun: next.UnixNano(),
	}})
	s, ok := res.(*Schedule)
	require.True(f.t, ok, "%v", res)
	return s
}

func (f *fsmBundle) schedule(id string) *Schedule {
	f.t.Helper()
	s, err := ReadSchedule(f.db, testNS, id)
	require.NoError(f.t, err)
	return s
}

func (f *fsmBundle) runIndexed(s *Schedule) bool {
	return f.has(keys.Timed(testNS, keys.KindScheduleRun, s.NextRun, s.ID))
}

// Not parallel: newIDForTest shares a counter with the other apply tests.
func TestApplyScheduleCreate(t *testing.T) {
	f := setupFSM(t)
	next := f.now.Add(time.Minute)
	s := f.createSchedule(sch1, "nightly", next)
	require.Equal(t, f.now.UnixNano(), s.CreatedAt)
	require.Equal(t, next.UnixNano(), f.schedule(sch1).NextRun)
	require.True(t, f.runIndexed(s))
	require.True(t, f.has(keys.Registry(testNS)), "the sweep must find the namespace")
	// The name is unique in the namespace.
	res := f.apply(ScheduleCreate.Type, &ScheduleCmd{NS: testNS, Sched: Schedule{ID: sch2, Name: "nightly", Enabled: true}})
	require.Equal(t, apierr.Conflict, apierr.CodeOf(res.(error)))
	_, err := ReadSchedule(f.db, testNS, sch2)
	require.Equal(t, apierr.NotFound, apierr.CodeOf(err))
	// A disabled schedule is not in the run index.
	d := f.apply(ScheduleCreate.Type, &ScheduleCmd{NS: testNS, Sched: Schedule{ID: sch2, Name: "off", Enabled: false}}).(*Schedule)
	require.False(t, f.runIndexed(d))
}

func TestApplyScheduleUpdate(t *testing.T) {
	f := setupFSM(t)
	old := f.createSchedule(sch1, "a", f.now.Add(time.Minute))
	f.createSchedule(sch2, "b", f.now.Add(time.Minute))
	f.advance(time.Second)
	next := f.now.Add(time.Hour)
	upd := Schedule{ID: sch1, Name: "renamed", Queue: "q2", Cron: "@hourly", Timezone: "Europe/Paris", Enabled: true, NextRun: next.UnixNano()}
	s := f.apply(ScheduleUpdate.Type, &ScheduleCmd{NS: testNS, Sched: upd}).(*Schedule)
	require.Equal(t, old.CreatedAt, s.CreatedAt)
	require.Equal(t, f.now.UnixNano(), s.UpdatedAt)
	require.Equal(t, "q2", f.schedule(sch1).Queue)
	require.False(t, f.runIndexed(old), "the old run moved")
	require.True(t, f.runIndexed(s))
	require.False(t, f.has(keys.ScheduleName(testNS, "a")), "the old name is free")
	require.Equal(t, []string{sch1}, f.named("renamed"))
	require.Empty(t, f.named("a"))
	// Taking another schedule's name is a conflict; an unknown id is not found.
	upd.Name = "b"
	require.Equal(t, apierr.Conflict, apierr.CodeOf(f.apply(ScheduleUpdate.Type, &ScheduleCmd{NS: testNS, Sched: upd}).(error)))
	upd.ID, upd.Name = "sch_00000000000000000000000099", "z"
	require.Equal(t, apierr.NotFound, apierr.CodeOf(f.apply(ScheduleUpdate.Type, &ScheduleCmd{NS: testNS, Sched: upd}).(error)))
}

func TestApplyScheduleDelete(t *testing.T) {
	f := setupFSM(t)
	s := f.createSchedule(sch1, "a", f.now.Add(time.Minute))
	require.Nil(t, f.apply(ScheduleDelete.Type, &ScheduleIDCmd{NS: testNS, ID: sch1}))
	require.False(t, f.has(keys.Schedule(testNS, sch1)))
	require.False(t, f.has(keys.ScheduleName(testNS, "a")))
	require.False(t, f.runIndexed(s))
	require.Equal(t, apierr.NotFound, apierr.CodeOf(f.apply(ScheduleDelete.Type, &ScheduleIDCmd{NS: testNS, ID: sch1}).(error)))
	// The name can be used again.
	f.createSchedule(sch2, "a", f.now.Add(time.Minute))
}

func TestApplyScheduleEnableDisable(t *testing.T) {
	f := setupFSM(t)
	s := f.createSchedule(sch1, "a", f.now.Add(time.Minute))
	d := f.apply(ScheduleDisable.Type, &ScheduleIDCmd{NS: testNS, ID: sch1}).(*Schedule)
	require.False(t, d.Enabled)
	require.Zero(t, d.NextRun)
	require.False(t, f.runIndexed(s))
	// A disabled schedule does not fire, even for the run it had.
	require.Equal(t, false, f.apply(ScheduleFire.Type, &FireCmd{NS: testNS, ID: sch1, RunAt: s.NextRun, NextRun: s.NextRun + 1, JobID: f.e.newIDForTest()}))

	next := f.now.Add(2 * time.Minute).UnixNano()
	en := f.apply(ScheduleEnable.Type, &ScheduleIDCmd{NS: testNS, ID: sch1, NextRun: next}).(*Schedule)
	require.True(t, en.Enabled)
	require.Equal(t, next, en.NextRun)
	require.True(t, f.runIndexed(en))
	// Enabling again keeps the run it has.
	again := f.apply(ScheduleEnable.Type, &ScheduleIDCmd{NS: testNS, ID: sch1, NextRun: next + 1}).(*Schedule)
	require.Equal(t, next, again.NextRun)
	require.Equal(t, apierr.NotFound, apierr.CodeOf(f.apply(ScheduleEnable.Type, &ScheduleIDCmd{NS: testNS, ID: sch2}).(error)))
}

func TestApplyScheduleFireEnqueuesOncePerRun(t *testing.T) {
	f := setupFSM(t)
	run := f.now.Add(time.Minute)
	s := f.createSchedule(sch1, "a", run)
	// Not due by the entry's clock: nothing happens.
	c := &FireCmd{NS: testNS, ID: sch1, RunAt: run.UnixNano(), NextRun: run.Add(time.Minute).UnixNano(), JobID: f.e.newIDForTest()}
	require.Equal(t, false, f.apply(ScheduleFire.Type, c))
	require.False(t, f.has(keys.Job(testNS, c.JobID)))

	f.advance(time.Minute)
	require.Equal(t, true, f.apply(ScheduleFire.Type, c))
	j := f.job(c.JobID)
	require.Equal(t, job.Pending, j.State)
	require.Equal(t, "cron.q", j.Queue)
	require.JSONEq(t, `{"n":1}`, string(j.Payload))
	require.Equal(t, job.High, j.Priority)
	require.Equal(t, 2, j.MaxRetries)
	require.EqualValues(t, 1, f.counts("cron.q")[job.Pending])
	got := f.schedule(sch1)
	require.Equal(t, run.UnixNano(), got.LastRun)
	require.Equal(t, c.JobID, got.LastJobID)
	require.Equal(t, c.NextRun, got.NextRun)
	require.False(t, f.runIndexed(s))
	require.True(t, f.runIndexed(got))

	// The same command again, or a stale one for the same run with another
	// job id, changes nothing.
	require.Equal(t, false, f.apply(ScheduleFire.Type, c))
	stale := *c
	stale.JobID = f.e.newIDForTest()
	require.Equal(t, false, f.apply(ScheduleFire.Type, &stale))
	require.False(t, f.has(keys.Job(testNS, stale.JobID)))
	require.EqualValues(t, 1, f.counts("cron.q")[job.Pending])
	require.Equal(t, got, f.schedule(sch1))

	// A next run that does not advance is refused.
	f.advance(time.Minute)
	bad := &FireCmd{NS: testNS, ID: sch1, RunAt: got.NextRun, NextRun: got.NextRun, JobID: f.e.newIDForTest()}
	require.Equal(t, false, f.apply(ScheduleFire.Type, bad))
	// An unknown schedule does not fire.
	require.Equal(t, false, f.apply(ScheduleFire.Type, &FireCmd{NS: testNS, ID: sch2, RunAt: 1, NextRun: 2, JobID: f.e.newIDForTest()}))
}

func TestApplyScheduleFireRespectsUniqueKey(t *testing.T) {
	f := setupFSM(t)
	run := f.now
	f.apply(ScheduleCreate.Type, &ScheduleCmd{NS: testNS, Sched: Schedule{ID: sch1, Name: "u", Queue: "q", Cron: "@every 1m",
		Timezone: "UTC", UniqueKey: "report", Enabled: true, NextRun: run.UnixNano()}})
	first := &FireCmd{NS: testNS, ID: sch1, RunAt: run.UnixNano(), NextRun: run.Add(time.Minute).UnixNano(), JobID: f.e.newIDForTest()}
	require.Equal(t, true, f.apply(ScheduleFire.Type, first))
	f.advance(time.Minute)
	second := &FireCmd{NS: testNS, ID: sch1, RunAt: first.NextRun, NextRun: run.Add(2 * time.Minute).UnixNano(), JobID: f.e.newIDForTest()}
	require.Equal(t, true, f.apply(ScheduleFire.Type, second))
	// The first job still holds the key: no second job, and the run names it.
	require.False(t, f.has(keys.Job(testNS, second.JobID)))
	require.Equal(t, first.JobID, f.schedule(sch1).LastJobID)
	require.Equal(t, second.NextRun, f.schedule(sch1).NextRun)
}

// The same commands applied to two fresh state machines leave the same
// bytes: nothing in apply reads the clock, parses a time zone or draws
// random numbers.
func TestApplyScheduleDeterministic(t *testing.T) {
	dump := func() map[string]string {
		f := setupFSM(t)
		s := f.createSchedule(sch1, "a", f.now)
		f.apply(ScheduleFire.Type, &FireCmd{NS: testNS, ID: sch1, RunAt: s.NextRun, NextRun: s.NextRun + int64(time.Minute), JobID: "job_00000000000000000000000077"})
		f.apply(ScheduleDisable.Type, &ScheduleIDCmd{NS: testNS, ID: sch1})
		f.apply(ScheduleEnable.Type, &ScheduleIDCmd{NS: testNS, ID: sch1, NextRun: s.NextRun + int64(time.Hour)})
		f.apply(ScheduleUpdate.Type, &ScheduleCmd{NS: testNS, Sched: Schedule{ID: sch1, Name: "b", Queue: "q", Cron: "0 9 * * *", Timezone: "America/New_York", Enabled: true, NextRun: 42}})
		out := map[string]string{}
		it, err := f.db.NewIter(nil)
		require.NoError(t, err)
		for ok := it.First(); ok; ok = it.Next() {
			out[string(it.Key())] = string(it.Value())
		}
		require.NoError(t, it.Close())
		return out
	}
	a, b := dump(), dump()
	require.NotEmpty(t, a)
	require.Equal(t, a, b)
}

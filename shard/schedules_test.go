package shard

import (
	"context"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/shard/engine"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

func (b *bundle) createSchedule(body map[string]any) map[string]any {
	b.t.Helper()
	r := b.call("POST", "/api/v1/schedules", body)
	require.Equal(b.t, 201, r.Status, string(r.Raw))
	return r.Body
}

func TestScheduleEndpoints(t *testing.T) {
	t.Parallel()
	b := setup(t)
	before := time.Now()
	s := b.createSchedule(map[string]any{"name": "daily-report", "queue": "reports.generate", "cron": "0 9 * * *",
		"timezone": "America/New_York", "payload": map[string]any{"type": "daily"}, "unique_key": "daily-report"})
	id := s["id"].(string)
	require.True(t, strings.HasPrefix(id, "sch_"), id)
	require.Equal(t, "daily-report", s["name"])
	require.Equal(t, "America/New_York", s["timezone"])
	require.Equal(t, map[string]any{"type": "daily"}, s["payload"])
	require.Equal(t, "normal", s["priority"])
	require.Equal(t, float64(3), s["max_retries"])
	require.Equal(t, true, s["enabled"])
	require.Nil(t, s["last_run"])
	require.Nil(t, s["last_job_id"])
	next, err := time.Parse(time.RFC3339, s["next_run"].(string))
	require.NoError(t, err)
	ny, _ := time.LoadLocation("America/New_York")
	require.True(t, next.After(before))
	require.Equal(t, 9, next.In(ny).Hour(), "09:00 in New York")
	require.Zero(t, next.In(ny).Minute())

	got := b.call("GET", "/api/v1/schedules/"+id, nil)
	require.Equal(t, 200, got.Status)
	require.Equal(t, s, got.Body)
	list := b.call("GET", "/api/v1/schedules", nil)
	require.Equal(t, 200, list.Status)
	require.Equal(t, []any{s}, list.Body["schedules"])

	// PUT replaces: absent fields take their defaults.
	up := b.call("PUT", "/api/v1/schedules/"+id, map[string]any{"name": "hourly", "queue": "q2", "cron": "@hourly", "priority": "high", "max_retries": 0})
	require.Equal(t, 200, up.Status, string(up.Raw))
	require.Equal(t, "UTC", up.Body["timezone"])
	require.Equal(t, "high", up.Body["priority"])
	require.Equal(t, float64(0), up.Body["max_retries"])
	require.Nil(t, up.Body["unique_key"])
	require.Nil(t, up.Body["payload"])
	require.Equal(t, s["created_at"], up.Body["created_at"])

	dis := b.call("POST", "/api/v1/schedules/"+id+"/disable", nil)
	require.Equal(t, 200, dis.Status)
	require.Equal(t, false, dis.Body["enabled"])
	require.Nil(t, dis.Body["next_run"])
	en := b.call("POST", "/api/v1/schedules/"+id+"/enable", nil)
	require.Equal(t, 200, en.Status)
	require.Equal(t, true, en.Body["enabled"])
	require.NotNil(t, en.Body["next_run"])

	require.Equal(t, 204, b.call("DELETE", "/api/v1/schedules/"+id, nil).Status)
	require.Equal(t, 404, b.call("GET", "/api/v1/schedules/"+id, nil).Status)
	list = b.call("GET", "/api/v1/schedules", nil)
	require.Equal(t, []any{}, list.Body["schedules"])
}

func TestScheduleErrors(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ok := map[string]any{"name": "a", "queue": "q", "cron": "*/5 * * * *"}
	with := func(k string, v any) map[string]any {
		m := map[string]any{}
		for k2, v2 := range ok {
			m[k2] = v2
		}
		if v == nil {
			delete(m, k)
		} else {
			m[k] = v
		}
		return m
	}
	for _, tc := range []struct {
		body  any
		field string
	}{
		{with("cron", "61 * * * *"), "cron"},
		{with("cron", "not a cron"), "cron"},
		{with("cron", nil), "cron"},
		{with("cron", "TZ=UTC * * * * *"), "cron"},
		{with("cron", "0 0 30 2 *"), "cron"}, // 30 February never comes
		{with("timezone", "Mars/Olympus"), "timezone"},
		{with("timezone", "Local"), "timezone"},
		{with("queue", "bad queue!"), "queue"},
		{with("queue", nil), "queue"},
		{with("name", nil), "name"},
		{with("name", strings.Repeat("n", 129)), "name"},
		{with("priority", "urgent"), "priority"},
		{with("max_retries", -1), "max_retries"},
		{with("surprise", 1), "surprise"},
	} {
		r := b.call("POST", "/api/v1/schedules", tc.body)
		require.Equal(t, 400, r.Status, "%v: %s", tc.body, r.Raw)
		require.Equal(t, tc.field, errField(r), "%v", tc.body)
	}
	big := with("payload", strings.Repeat("x", wire.MaxPayloadBytes+1))
	r := b.call("POST", "/api/v1/schedules", big)
	require.Equal(t, 413, r.Status, string(r.Raw))
	require.Equal(t, "payload", errField(r))
	require.Equal(t, 400, b.call("POST", "/api/v1/schedules", "{").Status)

	// Nothing was stored by a refused request.
	require.Equal(t, []any{}, b.call("GET", "/api/v1/schedules", nil).Body["schedules"])

	s := b.createSchedule(ok)
	id := s["id"].(string)
	r = b.call("POST", "/api/v1/schedules", ok)
	require.Equal(t, 409, r.Status)
	require.Equal(t, "conflict", errCode(r))
	other := b.createSchedule(with("name", "b"))
	r = b.call("PUT", "/api/v1/schedules/"+other["id"].(string), ok)
	require.Equal(t, 409, r.Status, "renaming onto a taken name")
	r = b.call("PUT", "/api/v1/schedules/"+id, with("cron", "bad"))
	require.Equal(t, 400, r.Status)
	require.Equal(t, "cron", errField(r))
	r = b.call("PUT", "/api/v1/schedules/"+id, with("extra", true))
	require.Equal(t, 400, r.Status)

	missing := "sch_01HX0000000000000000000000"
	for _, c := range []struct{ method, path string }{
		{"GET", "/api/v1/schedules/" + missing}, {"PUT", "/api/v1/schedules/" + missing},
		{"DELETE", "/api/v1/schedules/" + missing}, {"POST", "/api/v1/schedules/" + missing + "/enable"},
		{"POST", "/api/v1/schedules/" + missing + "/disable"}, {"GET", "/api/v1/schedules/nonsense"},
		{"DELETE", "/api/v1/schedules/job_01HX0000000000000000000000"},
	} {
		r := b.call(c.method, c.path, ok)
		require.Equal(t, 404, r.Status, "%s %s: %s", c.method, c.path, r.Raw)
	}
	// Another namespace sees none of it.
	other2 := "t_01hx0000000000000000000000/other"
	r = b.call("GET", "/api/v1/schedules/"+id, nil, wire.ShardNamespaceHeader, other2)
	require.Equal(t, 404, r.Status)
	r = b.call("DELETE", "/api/v1/schedules/"+id, nil, wire.ShardNamespaceHeader, other2)
	require.Equal(t, 404, r.Status)
	require.Equal(t, []any{}, b.call("GET", "/api/v1/schedules", nil, wire.ShardNamespaceHeader, other2).Body["schedules"])
	r = b.call("GET", "/api/v1/schedules", nil, wire.ShardNamespaceHeader, "")
	require.Equal(t, 400, r.Status)
}

// drainRuns fetches and acks every pending job of queue and returns the
// run times their schedule fired for, in order.
func (b *bundle) drainRuns(queue string) []time.Time {
	b.t.Helper()
	var runs []time.Time
	for {
		f := b.fetch([]string{queue}, nil)
		if f.Status == 204 {
			break
		}
		require.Equal(b.t, 200, f.Status, string(f.Raw))
		tags := f.Body["tags"].(map[string]any)
		at, err := time.Parse(time.RFC3339Nano, tags[wire.TagScheduleRun].(string))
		require.NoError(b.t, err)
		runs = append(runs, at)
		require.Equal(b.t, 200, b.call("POST", "/api/v1/ack/"+f.Body["job_id"].(string), nil).Status)
	}
	sort.Slice(runs, func(i, j int) bool { return runs[i].Before(runs[j]) })
	return runs
}

func requireDistinct(t *testing.T, runs []time.Time) {
	t.Helper()
	for i := 1; i < len(runs); i++ {
		require.True(t, runs[i].After(runs[i-1]), "run %s fired twice", runs[i])
	}
}

// scheduleAt reads schedule id's last run (zero before its first).
func (b *bundle) lastRun(id string) string {
	b.t.Helper()
	r := b.call("GET", "/api/v1/schedules/"+id, nil)
	require.Equal(b.t, 200, r.Status, string(r.Raw))
	last, _ := r.Body["last_run"].(string)
	return last
}

// tick moves the node's fake clock by d, then waits until schedule id has
// fired for a run after the one it last fired for.
func (b *bundle) tick(clock *clockwork.FakeClock, d time.Duration, id string) {
	b.t.Helper()
	before := b.lastRun(id)
	clock.Advance(d)
	eventually(b.t, 5*time.Second, func() bool { return b.lastRun(id) != before }, "schedule fired")
}

func TestScheduleFiresOncePerRun(t *testing.T) {
	t.Parallel()
	clock := clockwork.NewFakeClockAt(time.Now())
	b := setup(t, withClock(clock))
	s := b.createSchedule(map[string]any{"name": "tick", "queue": "ticks", "cron": "@every 1s", "payload": map[string]any{"k": "v"}})
	id := s["id"].(string)
	for range 3 {
		b.tick(clock, time.Second, id)
	}
	require.Equal(t, 200, b.call("POST", "/api/v1/schedules/"+id+"/disable", nil).Status)
	runs := b.drainRuns("ticks")
	require.GreaterOrEqual(t, len(runs), 2, "about one run per second over 3 s")
	require.LessOrEqual(t, len(runs), 4)
	requireDistinct(t, runs)
	for i := 1; i < len(runs); i++ {
		require.Equal(t, time.Second, runs[i].Sub(runs[i-1]), "every second, none skipped")
	}
	got := b.call("GET", "/api/v1/schedules/"+id, nil).Body
	require.Equal(t, runs[len(runs)-1].UTC().Format(time.RFC3339Nano), got["last_run"])
	require.NotNil(t, got["last_job_id"])

	// Disabled: no more runs, while another schedule shows the sweeps go on.
	other := b.createSchedule(map[string]any{"name": "other", "queue": "others", "cron": "@every 1s"})
	b.tick(clock, 1500*time.Millisecond, other["id"].(string))
	require.Empty(t, b.drainRuns("ticks"))
}

// A fire proposed again for a run already fired (a retried proposal, or a
// deposed leader's sweep) goes through Raft and changes nothing.
func TestScheduleRepeatedFireIsNoop(t *testing.T) {
	t.Parallel()
	clock := clockwork.NewFakeClockAt(time.Now())
	b := setup(t, withClock(clock), func(c *Config) { c.SweepInterval = time.Hour }) // only this test fires
	s := b.createSchedule(map[string]any{"name": "once", "queue": "once", "cron": "@every 1s"})
	id := s["id"].(string)
	cur, err := b.srv.Service().GetSchedule(testNS, tenancy.AllQueues(), id)
	require.NoError(t, err)
	run := cur.NextRun.UnixNano()
	clock.Advance(cur.NextRun.Sub(clock.Now())) // the run time is reached
	ctx := context.Background()
	fired, err := b.srv.Service().FireSchedule(ctx, testNS, id, run, clock.Now().UnixNano())
	require.NoError(t, err)
	require.True(t, fired)
	// The same run again: the stored next run has moved on.
	c := &engine.FireCmd{NS: testNS, ID: id, RunAt: run, NextRun: run + int64(time.Hour), JobID: b.srv.Service().NewID("job_")}
	res, err := engine.ScheduleFire.Propose(ctx, b.srv.repl, c)
	require.NoError(t, err)
	require.Equal(t, false, res)
	runs := b.drainRuns("once")
	require.Len(t, runs, 1)
	require.Equal(t, run, runs[0].UnixNano())
}

// A schedule survives a restart of its node and keeps firing, once per run;
// runs missed while the node was down are fired once, not replayed.
func TestScheduleKeepsFiringAfterRestart(t *testing.T) {
	t.Parallel()
	clock := clockwork.NewFakeClockAt(time.Now())
	b := setup(t, withClock(clock))
	s := b.createSchedule(map[string]any{"name": "tick", "queue": "ticks", "cron": "@every 1s"})
	id := s["id"].(string)
	b.tick(clock, time.Second, id) // the first run
	before := b.drainRuns("ticks")
	require.NoError(t, b.srv.Stop())
	down := clock.Now()
	clock.Advance(2500 * time.Millisecond) // two or three runs missed

	b2 := start(t, b.dir, withClock(clock))
	up := clock.Now()
	b2.tick(clock, 100*time.Millisecond, id) // the missed runs fire once
	b2.tick(clock, time.Second, id)          // and the schedule goes on
	runs := append(before, b2.drainRuns("ticks")...)
	requireDistinct(t, runs)
	var missed, after int
	for _, r := range runs {
		switch {
		case r.After(down) && r.Before(up):
			missed++
		case !r.Before(up):
			after++
		}
	}
	require.LessOrEqual(t, missed, 1, "missed runs fire once: %v", runs)
	require.GreaterOrEqual(t, after, 1, "the schedule keeps firing: %v", runs)
	got := b2.call("GET", "/api/v1/schedules/"+id, nil).Body
	next, err := time.Parse(time.RFC3339Nano, got["next_run"].(string))
	require.NoError(t, err)
	require.True(t, next.After(up), "next run is in the future")
}

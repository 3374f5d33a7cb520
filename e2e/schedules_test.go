package e2e

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/tenancy"
)

func TestScheduleFiresJobsThroughTheGateway(t *testing.T) {
	t.Parallel()
	owner, _ := shared.tenant(t)
	s, err := owner.CreateSchedule(ctx(t), client.ScheduleRequest{Name: "tick", Queue: "cron.tick", Cron: "@every 1s",
		Payload: map[string]string{"report": "daily"}})
	require.NoError(t, err)
	require.True(t, s.Enabled)
	require.NotNil(t, s.NextRun)

	// A worker receives the fired jobs, each for its own run.
	runs := map[string]bool{}
	for len(runs) < 2 {
		j, err := owner.Fetch(ctx(t), client.FetchRequest{Queues: []string{"cron.tick"}, WorkerID: "w", Timeout: 5 * time.Second})
		require.NoError(t, err)
		require.NotNil(t, j, "the schedule fires about once a second")
		require.JSONEq(t, `{"report":"daily"}`, string(j.Payload))
		require.Equal(t, s.ID, j.Tags["jobbie.schedule_id"])
		run := j.Tags["jobbie.run_at"]
		require.False(t, runs[run], "run %s fired twice", run)
		runs[run] = true
		require.NoError(t, owner.Ack(ctx(t), j.ID, nil))
	}
	got, err := owner.GetSchedule(ctx(t), s.ID)
	require.NoError(t, err)
	require.NotNil(t, got.LastRun)
	require.NotNil(t, got.LastJobID)

	// Disabled, it stops; deleted, it is gone.
	_, err = owner.DisableSchedule(ctx(t), s.ID)
	require.NoError(t, err)
	time.Sleep(300 * time.Millisecond) // a fire proposed just before the disable may still land
	for {
		j, err := owner.Fetch(ctx(t), client.FetchRequest{Queues: []string{"cron.tick"}, WorkerID: "w", Timeout: 10 * time.Millisecond})
		require.NoError(t, err)
		if j == nil {
			break
		}
		require.NoError(t, owner.Ack(ctx(t), j.ID, nil))
	}
	j, err := owner.Fetch(ctx(t), client.FetchRequest{Queues: []string{"cron.tick"}, WorkerID: "w", Timeout: 1500 * time.Millisecond})
	require.NoError(t, err)
	require.Nil(t, j, "a disabled schedule does not fire")
	require.NoError(t, owner.DeleteSchedule(ctx(t), s.ID))
	_, err = owner.GetSchedule(ctx(t), s.ID)
	require.True(t, client.IsNotFound(err), "%v", err)
}

func TestScheduleCRUDAndErrorsThroughTheGateway(t *testing.T) {
	t.Parallel()
	owner, ct := shared.tenant(t)
	req := client.ScheduleRequest{Name: "nightly", Queue: "reports", Cron: "0 3 * * *", Timezone: "Europe/Paris"}
	s, err := owner.CreateSchedule(ctx(t), req)
	require.NoError(t, err)
	require.Equal(t, 3, s.NextRun.In(mustZone(t, "Europe/Paris")).Hour())

	_, err = owner.CreateSchedule(ctx(t), req)
	require.True(t, client.IsConflict(err), "%v", err)
	bad := req
	bad.Name, bad.Cron = "other", "every day"
	_, err = owner.CreateSchedule(ctx(t), bad)
	require.True(t, client.IsBadRequest(err), "%v", err)
	g := shared.gateway + "/api/v1"
	r := call(t, "POST", g+"/schedules", ct.OwnerKey, map[string]any{"name": "x", "queue": "q", "cron": "* * * * *", "timezone": "Nowhere/Else"})
	require.Equal(t, 400, r.Status)
	require.Equal(t, "timezone", r.field())
	r = call(t, "POST", g+"/schedules", ct.OwnerKey, map[string]any{"name": "x", "queue": "no spaces", "cron": "* * * * *"})
	require.Equal(t, 400, r.Status)
	require.Equal(t, "queue", r.field())
	r = call(t, "POST", g+"/schedules", ct.OwnerKey, map[string]any{"name": "x", "queue": "q", "cron": "* * * * *", "colour": "red"})
	require.Equal(t, 400, r.Status)

	upd := req
	upd.Cron = "30 4 * * *"
	u, err := owner.UpdateSchedule(ctx(t), s.ID, upd)
	require.NoError(t, err)
	require.Equal(t, "30 4 * * *", u.Cron)
	list, err := owner.ListSchedules(ctx(t))
	require.NoError(t, err)
	require.Len(t, list, 1)
	require.Equal(t, s.ID, list[0].ID)

	// Roles: a producer may not manage schedules, a viewer may read them.
	prod, err := owner.CreateKey(ctx(t), clientKey("p", tenancy.RoleProducer, "default"))
	require.NoError(t, err)
	r = call(t, "POST", g+"/schedules", prod.Token, map[string]any{"name": "p", "queue": "q", "cron": "* * * * *"})
	require.Equal(t, 403, r.Status, string(r.Raw))
	r = call(t, "DELETE", g+"/schedules/"+s.ID, prod.Token, nil)
	require.Equal(t, 403, r.Status)
	viewer, err := owner.CreateKey(ctx(t), clientKey("v", tenancy.RoleViewer, "default"))
	require.NoError(t, err)
	r = call(t, "GET", g+"/schedules/"+s.ID, viewer.Token, nil)
	require.Equal(t, 200, r.Status)
	r = call(t, "POST", g+"/schedules/"+s.ID+"/disable", viewer.Token, nil)
	require.Equal(t, 403, r.Status)
}

func TestTenantCannotTouchAnotherTenantsSchedules(t *testing.T) {
	t.Parallel()
	a, _ := shared.tenant(t)
	_, ctB := shared.tenant(t)
	s, err := a.CreateSchedule(ctx(t), client.ScheduleRequest{Name: "secret-report", Queue: "secret", Cron: "0 0 * * *",
		Payload: "a's data"})
	require.NoError(t, err)
	g := shared.gateway + "/api/v1"
	body := map[string]any{"name": "stolen", "queue": "q", "cron": "* * * * *"}
	for _, c := range []struct{ method, path string }{
		{"GET", "/schedules/" + s.ID}, {"PUT", "/schedules/" + s.ID}, {"DELETE", "/schedules/" + s.ID},
		{"POST", "/schedules/" + s.ID + "/enable"}, {"POST", "/schedules/" + s.ID + "/disable"},
	} {
		r := call(t, c.method, g+c.path, ctB.OwnerKey, body)
		require.Equal(t, 404, r.Status, "%s %s: %s", c.method, c.path, r.Raw)
		require.NotContains(t, string(r.Raw), "a's data")
	}
	r := call(t, "GET", g+"/schedules", ctB.OwnerKey, nil)
	require.Equal(t, 200, r.Status)
	require.Empty(t, r.Body["schedules"])
	// B may use the same name in its own namespace.
	r = call(t, "POST", g+"/schedules", ctB.OwnerKey, map[string]any{"name": "secret-report", "queue": "q", "cron": "0 0 * * *"})
	require.Equal(t, 201, r.Status, string(r.Raw))

	got, err := a.GetSchedule(ctx(t), s.ID)
	require.NoError(t, err)
	require.Equal(t, "secret-report", got.Name)
	require.True(t, got.Enabled)
	require.Equal(t, s.UpdatedAt, got.UpdatedAt, "untouched")
}

func mustZone(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	require.NoError(t, err)
	return loc
}

// A schedule's name may hold spaces and other characters a path carries
// escaped; every by-name route takes it through the gateway. A name with
// a "/" is reached by its id: the gateway refuses an escaped slash, which
// could split the path differently at the shard than where it was
// authorized.
func TestScheduleNamedWithSpacesByNameThroughTheGateway(t *testing.T) {
	t.Parallel()
	owner, ct := shared.tenant(t)
	s, err := owner.CreateSchedule(ctx(t), client.ScheduleRequest{Name: "nightly report: é", Queue: "reports", Cron: "0 3 * * *"})
	require.NoError(t, err)
	got, err := owner.GetSchedule(ctx(t), "nightly report: é")
	require.NoError(t, err)
	require.Equal(t, s.ID, got.ID)
	off, err := owner.DisableSchedule(ctx(t), "nightly report: é")
	require.NoError(t, err)
	require.False(t, off.Enabled)
	run, err := owner.RunSchedule(ctx(t), "nightly report: é")
	require.NoError(t, err)
	require.NotEmpty(t, run.JobID)

	slashed, err := owner.CreateSchedule(ctx(t), client.ScheduleRequest{Name: "a/b", Queue: "reports", Cron: "0 4 * * *"})
	require.NoError(t, err)
	_, err = owner.GetSchedule(ctx(t), "a/b")
	require.True(t, client.IsBadRequest(err), "%v", err)
	got, err = owner.GetSchedule(ctx(t), slashed.ID)
	require.NoError(t, err)
	require.Equal(t, "a/b", got.Name)
	r := call(t, "GET", shared.gateway+"/api/v1/schedules/nightly%2525report", ct.OwnerKey, nil)
	require.Equal(t, 400, r.Status, "a double escape is refused")

	require.NoError(t, owner.DeleteSchedule(ctx(t), "nightly report: é"))
	_, err = owner.GetSchedule(ctx(t), s.ID)
	require.True(t, client.IsNotFound(err), "%v", err)
}

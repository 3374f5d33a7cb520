package shard

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// A schedule name is unique per queue: a name another queue's schedule
// holds is free to take, by a create or a rename; a reference by that
// name then names two schedules, and every route answers 409
// ambiguous_name, naming both queues and asking for the id, and changes
// nothing. The ids still work, and once one is gone the name resolves.
func TestScheduleNamesAreUniquePerQueue(t *testing.T) {
	t.Parallel()
	b := setup(t)
	first := b.createSchedule(map[string]any{"name": "nightly", "queue": "reports", "cron": "@hourly"})
	second := b.createSchedule(map[string]any{"name": "nightly", "queue": "billing", "cron": "@daily"})
	require.NotEqual(t, first["id"], second["id"])
	r := b.call("POST", "/api/v1/schedules", map[string]any{"name": "nightly", "queue": "billing", "cron": "@hourly"})
	require.Equal(t, 409, r.Status, string(r.Raw))
	require.Equal(t, "conflict", errCode(r))
	require.Equal(t, "name", errField(r))

	// A rename onto a name another queue holds succeeds; onto one its own
	// queue holds, it does not.
	other := b.createSchedule(map[string]any{"name": "weekly", "queue": "emails", "cron": "@weekly"})
	r = b.call("PUT", "/api/v1/schedules/weekly", map[string]any{"name": "nightly", "queue": "emails", "cron": "@weekly"})
	require.Equal(t, 200, r.Status, string(r.Raw))
	require.Equal(t, other["id"], r.Body["id"])
	r = b.call("PUT", "/api/v1/schedules/"+other["id"].(string), map[string]any{"name": "nightly", "queue": "reports", "cron": "@weekly"})
	require.Equal(t, 409, r.Status, "moving it into a queue that has the name")
	require.Equal(t, "name", errField(r))
	require.Equal(t, 204, b.call("DELETE", "/api/v1/schedules/"+other["id"].(string), nil).Status)

	jobs := b.usage()["jobs"]
	for _, c := range []struct {
		method, path string
		body         any
	}{{"GET", "", nil}, {"PUT", "", map[string]any{"name": "nightly", "queue": "reports", "cron": "@weekly"}},
		{"DELETE", "", nil}, {"POST", "/enable", nil}, {"POST", "/disable", nil}, {"POST", "/run", nil}} {
		r := b.call(c.method, "/api/v1/schedules/nightly"+c.path, c.body)
		require.Equal(t, 409, r.Status, "%s %s: %s", c.method, c.path, r.Raw)
		require.Equal(t, "ambiguous_name", errCode(r))
		require.Contains(t, errMessage(r), "billing, reports")
		require.Contains(t, errMessage(r), "id")
	}
	require.Equal(t, jobs, b.usage()["jobs"], "no run enqueued a job")
	require.Len(t, b.call("GET", "/api/v1/schedules", nil).Body["schedules"], 2)
	require.Equal(t, first, b.call("GET", "/api/v1/schedules/"+first["id"].(string), nil).Body, "unchanged")

	require.Equal(t, 204, b.call("DELETE", "/api/v1/schedules/"+first["id"].(string), nil).Status)
	r = b.call("GET", "/api/v1/schedules/nightly", nil)
	require.Equal(t, 200, r.Status, string(r.Raw))
	require.Equal(t, second["id"], r.Body["id"])
}

// A key scoped to some queues gets the answers it would get if the
// schedules of other queues did not exist: a name one of them holds is
// free to create or rename to, and every reference by that name acts on
// the schedule in scope; the other stays as it was.
func TestScopeScheduleNamesIgnoreOtherQueues(t *testing.T) {
	t.Parallel()
	b := setup(t)
	e := b.withScope("reports.*")
	theirs := b.createSchedule(map[string]any{"name": "nightly", "queue": "billing", "cron": "@every 60s"})
	b.createSchedule(map[string]any{"name": "weekly", "queue": "billing", "cron": "@every 60s"})

	r := e.call("POST", "/api/v1/schedules", map[string]any{"name": "nightly", "queue": "reports.daily", "cron": "@every 120s"})
	require.Equal(t, 201, r.Status, string(r.Raw))
	mine := r.Body
	m := e.call("POST", "/api/v1/schedules", map[string]any{"name": "monthly", "queue": "reports.daily", "cron": "@every 60s"})
	require.Equal(t, 201, m.Status, string(m.Raw))
	r = e.call("PUT", "/api/v1/schedules/monthly", map[string]any{"name": "weekly", "queue": "reports.daily", "cron": "@every 60s"})
	require.Equal(t, 200, r.Status, "renaming to a name another queue holds: %s", r.Raw)
	require.Equal(t, m.Body["id"], r.Body["id"])

	r = e.call("GET", "/api/v1/schedules/nightly", nil)
	require.Equal(t, 200, r.Status, string(r.Raw))
	require.Equal(t, mine, r.Body)
	r = e.call("PUT", "/api/v1/schedules/nightly", map[string]any{"name": "nightly", "queue": "reports.daily", "cron": "@every 180s"})
	require.Equal(t, 200, r.Status, string(r.Raw))
	require.Equal(t, mine["id"], r.Body["id"])
	require.Equal(t, "@every 180s", r.Body["cron"])
	r = e.call("POST", "/api/v1/schedules/nightly/disable", nil)
	require.Equal(t, 200, r.Status, string(r.Raw))
	require.Equal(t, mine["id"], r.Body["id"])
	require.Equal(t, false, r.Body["enabled"])
	r = e.call("POST", "/api/v1/schedules/nightly/enable", nil)
	require.Equal(t, 200, r.Status, string(r.Raw))
	require.Equal(t, true, r.Body["enabled"])
	r = e.call("POST", "/api/v1/schedules/nightly/run", nil)
	require.Equal(t, 201, r.Status, string(r.Raw))
	require.Equal(t, "reports.daily", b.job(r.Body["job_id"].(string))["queue"])
	require.Equal(t, 204, e.call("DELETE", "/api/v1/schedules/nightly", nil).Status)
	require.Equal(t, 404, e.call("GET", "/api/v1/schedules/"+mine["id"].(string), nil).Status)

	// The other queue's schedule is as it was, and still found by name.
	got := b.call("GET", "/api/v1/schedules/nightly", nil)
	require.Equal(t, 200, got.Status, string(got.Raw))
	require.Equal(t, theirs, got.Body)
	nf := e.call("GET", "/api/v1/schedules/nightly", nil)
	sameAsMissing(t, nf, e.call("GET", "/api/v1/schedules/no-such", nil), "nightly", "no-such")
}

package shard

import (
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/wire"
)

// scheduleFields are the fields of a schedule a create or replace sets.
var scheduleFields = []string{"name", "queue", "cron", "timezone", "payload", "priority", "unique_key", "max_retries", "enabled"}

func pick(m map[string]any, fields []string) map[string]any {
	out := map[string]any{}
	for _, f := range fields {
		out[f] = m[f]
	}
	return out
}

// A PUT replaces every field and reads back as sent; the fields a GET
// shows go back in a PUT unchanged.
func TestSchedulePutRoundTripsEveryField(t *testing.T) {
	t.Parallel()
	b := setup(t)
	s := b.createSchedule(map[string]any{"name": "a", "queue": "q", "cron": "@hourly"})
	id := s["id"].(string)
	full := map[string]any{"name": "daily report", "queue": "reports.generate", "cron": "0 9 * * 1-5", "timezone": "Europe/Paris",
		"payload": map[string]any{"type": "daily", "n": 1.0}, "priority": "critical", "unique_key": "daily", "max_retries": 7.0, "enabled": false}
	r := b.call("PUT", "/api/v1/schedules/"+id, full)
	require.Equal(t, 200, r.Status, string(r.Raw))
	require.Equal(t, full, pick(r.Body, scheduleFields))
	require.Nil(t, r.Body["next_run"], "disabled")
	got := b.call("GET", "/api/v1/schedules/"+id, nil).Body
	require.Equal(t, full, pick(got, scheduleFields))
	require.Equal(t, s["created_at"], got["created_at"])

	// What was read goes back unchanged.
	r = b.call("PUT", "/api/v1/schedules/"+id, pick(got, scheduleFields))
	require.Equal(t, 200, r.Status, string(r.Raw))
	require.Equal(t, full, pick(r.Body, scheduleFields))

	// Left out, every field takes its default again.
	r = b.call("PUT", "/api/v1/schedules/"+id, map[string]any{"name": "daily report", "queue": "q", "cron": "@daily"})
	require.Equal(t, 200, r.Status, string(r.Raw))
	require.Equal(t, map[string]any{"name": "daily report", "queue": "q", "cron": "@daily", "timezone": "UTC", "payload": nil,
		"priority": "normal", "unique_key": nil, "max_retries": 3.0, "enabled": true}, pick(r.Body, scheduleFields))
	require.NotNil(t, r.Body["next_run"])
}

// Names are unique per queue (409 naming name), and every schedule route
// takes a name in place of the id.
func TestScheduleNamesAreUniqueAndAddressable(t *testing.T) {
	t.Parallel()
	b := setup(t)
	a := b.createSchedule(map[string]any{"name": "nightly", "queue": "q", "cron": "0 3 * * *"})
	odd := b.createSchedule(map[string]any{"name": "ops/weekly report é", "queue": "q", "cron": "0 3 * * 1"})

	r := b.call("POST", "/api/v1/schedules", map[string]any{"name": "nightly", "queue": "q", "cron": "@hourly"})
	require.Equal(t, 409, r.Status, string(r.Raw))
	require.Equal(t, "conflict", errCode(r))
	require.Equal(t, "name", errField(r))
	r = b.call("PUT", "/api/v1/schedules/"+odd["id"].(string), map[string]any{"name": "nightly", "queue": "q", "cron": "@hourly"})
	require.Equal(t, 409, r.Status, "renaming onto a taken name")
	require.Equal(t, "name", errField(r))
	require.Equal(t, "ops/weekly report é", b.call("GET", "/api/v1/schedules/"+odd["id"].(string), nil).Body["name"], "unchanged")
	// The same name in another namespace is another schedule.
	r = b.call("POST", "/api/v1/schedules", map[string]any{"name": "nightly", "queue": "q", "cron": "@hourly"},
		wire.ShardNamespaceHeader, otherTestNS)
	require.Equal(t, 201, r.Status, string(r.Raw))
	otherID := r.Body["id"].(string)

	// By name: read, replace, disable, enable, delete.
	got := b.call("GET", "/api/v1/schedules/nightly", nil)
	require.Equal(t, 200, got.Status)
	require.Equal(t, a, got.Body)
	got = b.call("GET", "/api/v1/schedules/"+url.PathEscape("ops/weekly report é"), nil)
	require.Equal(t, 200, got.Status, string(got.Raw))
	require.Equal(t, odd["id"], got.Body["id"])
	got = b.call("GET", "/api/v1/schedules/nightly", nil, wire.ShardNamespaceHeader, otherTestNS)
	require.Equal(t, otherID, got.Body["id"])
	r = b.call("PUT", "/api/v1/schedules/nightly", map[string]any{"name": "nightly", "queue": "q3", "cron": "0 4 * * *"})
	require.Equal(t, 200, r.Status, string(r.Raw))
	require.Equal(t, a["id"], r.Body["id"])
	require.Equal(t, "q3", r.Body["queue"])
	require.Equal(t, false, b.call("POST", "/api/v1/schedules/nightly/disable", nil).Body["enabled"])
	require.Equal(t, true, b.call("POST", "/api/v1/schedules/nightly/enable", nil).Body["enabled"])
	r = b.call("PUT", "/api/v1/schedules/nightly", map[string]any{"name": "renamed", "queue": "q3", "cron": "0 4 * * *"})
	require.Equal(t, 200, r.Status)
	require.Equal(t, 404, b.call("GET", "/api/v1/schedules/nightly", nil).Status, "the old name is free")
	require.Equal(t, a["id"], b.call("GET", "/api/v1/schedules/renamed", nil).Body["id"])
	require.Equal(t, 204, b.call("DELETE", "/api/v1/schedules/renamed", nil).Status)
	require.Equal(t, 404, b.call("GET", "/api/v1/schedules/"+a["id"].(string), nil).Status)
	require.Equal(t, 200, b.call("GET", "/api/v1/schedules/nightly", nil, wire.ShardNamespaceHeader, otherTestNS).Status)

	// A name may not look like an id: ids are told apart by their prefix.
	r = b.call("POST", "/api/v1/schedules", map[string]any{"name": "sch_mine", "queue": "q", "cron": "@hourly"})
	require.Equal(t, 400, r.Status)
	require.Equal(t, "name", errField(r))
	r = b.call("PUT", "/api/v1/schedules/"+odd["id"].(string), map[string]any{"name": "sch_x", "queue": "q", "cron": "@hourly"})
	require.Equal(t, 400, r.Status)
	require.Equal(t, "name", errField(r))
	for _, ref := range []string{"sch_mine", "sch_01HX0000000000000000000000", "missing", url.PathEscape("a b")} {
		r := b.call("GET", "/api/v1/schedules/"+ref, nil)
		require.Equal(t, 404, r.Status, ref)
	}
}

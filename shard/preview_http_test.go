package shard

import (
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/require"
)

// previewAt is a node whose clock stands still at now (RFC 3339).
func previewAt(t *testing.T, now string) *bundle {
	t.Helper()
	at, err := time.Parse(time.RFC3339, now)
	require.NoError(t, err)
	return setup(t, withClock(clockwork.NewFakeClockAt(at)))
}

func (b *bundle) preview(body any) resp {
	b.t.Helper()
	return b.call("POST", "/api/v1/schedules/preview", body)
}

func TestSchedulePreviewListsRunsInTheZone(t *testing.T) {
	t.Parallel()
	b := previewAt(t, "2026-11-24T13:37:00Z") // 14:37 in Paris (UTC+1 in winter)
	r := b.preview(map[string]any{"cron": " 0 15 * * * ", "timezone": "Europe/Paris"})
	require.Equal(t, 200, r.Status, string(r.Raw))
	require.Equal(t, map[string]any{"cron": "0 15 * * *", "timezone": "Europe/Paris", "next_runs": []any{
		"2026-11-24T15:00:00+01:00", "2026-11-25T15:00:00+01:00", "2026-11-26T15:00:00+01:00",
		"2026-11-27T15:00:00+01:00", "2026-11-28T15:00:00+01:00",
	}}, r.Body, "5 by default, the zone's offset, the cron trimmed as a create stores it")

	// Defaults: UTC. Runs are strictly after now: 14:00 is not "next" at 13:37, 13:37 would not be either.
	r = b.preview(map[string]any{"cron": "@hourly", "count": 2})
	require.Equal(t, 200, r.Status, string(r.Raw))
	require.Equal(t, map[string]any{"cron": "@hourly", "timezone": "UTC",
		"next_runs": []any{"2026-11-24T14:00:00Z", "2026-11-24T15:00:00Z"}}, r.Body)
	r = b.preview(map[string]any{"cron": "37 13 * * *", "count": 1})
	require.Equal(t, []any{"2026-11-25T13:37:00Z"}, r.Body["next_runs"], "now itself is not a next run")

	r = b.preview(map[string]any{"cron": "@every 90s", "count": 3})
	require.Equal(t, []any{"2026-11-24T13:38:30Z", "2026-11-24T13:40:00Z", "2026-11-24T13:41:30Z"}, r.Body["next_runs"])

	r = b.preview(map[string]any{"cron": "*/10 * * * *", "count": 50})
	require.Equal(t, 200, r.Status, string(r.Raw))
	require.Len(t, r.Body["next_runs"], 50)

	// Nothing was stored.
	require.Equal(t, []any{}, b.call("GET", "/api/v1/schedules", nil).Body["schedules"])
}

// Across the spring change to summer time the offset follows each run.
func TestSchedulePreviewAcrossDST(t *testing.T) {
	t.Parallel()
	b := previewAt(t, "2026-03-27T12:00:00Z") // Paris moves to UTC+2 on 29 March 2026
	r := b.preview(map[string]any{"cron": "0 9 * * *", "timezone": "Europe/Paris", "count": 3})
	require.Equal(t, 200, r.Status, string(r.Raw))
	require.Equal(t, []any{"2026-03-28T09:00:00+01:00", "2026-03-29T09:00:00+02:00", "2026-03-30T09:00:00+02:00"}, r.Body["next_runs"])

	r = b.preview(map[string]any{"cron": "30 8 * * 1-5", "timezone": "America/New_York", "count": 2})
	require.Equal(t, []any{"2026-03-27T08:30:00-04:00", "2026-03-30T08:30:00-04:00"}, r.Body["next_runs"], "weekdays only; 12:00Z is 08:00 in New York")
}

// An expression that never matches again has no next run: an empty list,
// never null (a create refuses it; a preview shows why).
func TestSchedulePreviewNeverMatching(t *testing.T) {
	t.Parallel()
	b := previewAt(t, "2026-11-24T13:37:00Z")
	r := b.preview(map[string]any{"cron": "0 0 30 2 *"})
	require.Equal(t, 200, r.Status, string(r.Raw))
	require.Equal(t, []any{}, r.Body["next_runs"])
	require.Contains(t, string(r.Raw), `"next_runs":[]`)
}

// A preview checks cron and timezone with the same rules as a create.
func TestSchedulePreviewErrors(t *testing.T) {
	t.Parallel()
	b := previewAt(t, "2026-11-24T13:37:00Z")
	for _, tc := range []struct {
		body  any
		field string
	}{
		{map[string]any{"cron": "61 * * * *"}, "cron"},
		{map[string]any{"cron": "not a cron"}, "cron"},
		{map[string]any{"timezone": "UTC"}, "cron"},
		{map[string]any{"cron": "TZ=UTC * * * * *"}, "cron"},
		{map[string]any{"cron": "@every 0s"}, "cron"},
		{map[string]any{"cron": "@every 500ms"}, "cron"}, // below wire.MinEvery
		{map[string]any{"cron": "@every 1500ms"}, "cron"},
		{map[string]any{"cron": "@hourly", "timezone": "Mars/Olympus"}, "timezone"},
		{map[string]any{"cron": "@hourly", "timezone": "Local"}, "timezone"},
		{map[string]any{"cron": "@hourly", "count": 0}, "count"},
		{map[string]any{"cron": "@hourly", "count": -1}, "count"},
		{map[string]any{"cron": "@hourly", "count": 51}, "count"},
		{map[string]any{"cron": "@hourly", "count": "5"}, "count"},
		{map[string]any{"cron": "@hourly", "surprise": 1}, "surprise"},
	} {
		r := b.preview(tc.body)
		require.Equal(t, 400, r.Status, "%v: %s", tc.body, r.Raw)
		require.Equal(t, tc.field, errField(r), "%v: %s", tc.body, r.Raw)
		if tc.field != "cron" && tc.field != "timezone" {
			continue
		}
		create := map[string]any{"name": "n", "queue": "q"}
		for k, v := range tc.body.(map[string]any) {
			create[k] = v
		}
		r = b.call("POST", "/api/v1/schedules", create)
		require.Equal(t, 400, r.Status, "a create refuses %v too: %s", create, r.Raw)
		require.Equal(t, tc.field, errField(r), "%v", create)
	}
	r := b.preview(`{"cron":`)
	require.Equal(t, 400, r.Status, string(r.Raw))

	// wire.MinEvery itself is allowed, as on a create.
	r = b.preview(map[string]any{"cron": "@every 1s", "count": 2})
	require.Equal(t, 200, r.Status, string(r.Raw))
	require.Equal(t, []any{"2026-11-24T13:37:01Z", "2026-11-24T13:37:02Z"}, r.Body["next_runs"])
}

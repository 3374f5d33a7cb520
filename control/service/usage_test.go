package service

import (
	"testing"
	"time"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/stretchr/testify/require"
)

func TestParseUsageQuery(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 5, 10, 30, 0, 0, time.UTC)

	q, err := ParseUsageQuery(now, "", "", "", "")
	require.NoError(t, err)
	require.Equal(t, UsageQuery{From: hourOf(11).Add(-24 * time.Hour), To: hourOf(11), Granularity: "hour"}, q,
		"default: the 24 hours up to the end of the current one")
	q, err = ParseUsageQuery(now, "", "", "day", "")
	require.NoError(t, err)
	require.Equal(t, time.Date(2026, 11, 6, 0, 0, 0, 0, time.UTC), q.To)
	require.Equal(t, time.Date(2026, 10, 7, 0, 0, 0, 0, time.UTC), q.From, "30 days, today the last")

	q, err = ParseUsageQuery(now, "2026-11-05T09:15:00+01:00", "2026-11-05T09:20:00Z", "hour", "emails")
	require.NoError(t, err)
	require.Equal(t, UsageQuery{From: hourOf(8), To: hourOf(10), Granularity: "hour", Namespace: "emails"}, q,
		"aligned to whole UTC hours")
	q, err = ParseUsageQuery(now, "2026-11-05T09:15:00Z", "2026-11-05T09:20:00Z", "hour", "")
	require.NoError(t, err)
	require.Equal(t, hourOf(9), q.From)
	require.Equal(t, hourOf(10), q.To, "a range inside one hour is that hour")

	_, err = ParseUsageQuery(now, "2026-10-01T00:00:00Z", "2026-11-01T00:00:00Z", "hour", "")
	require.NoError(t, err, "31 days of hours is the limit")
	_, err = ParseUsageQuery(now, "2025-11-05T00:00:00Z", "2026-11-06T00:00:00Z", "day", "")
	require.NoError(t, err, "366 days is the limit")

	bad := []struct{ from, to, gran, ns, field string }{
		{"2026-10-01T00:00:00Z", "2026-11-01T00:00:01Z", "hour", "", "from"},
		{"2025-11-03T00:00:00Z", "2026-11-05T00:00:00Z", "day", "", "from"},
		{"", "", "week", "", "granularity"},
		{"", "", "HOUR", "", "granularity"},
		{"yesterday", "", "", "", "from"},
		{"", "2026-11-05", "", "", "to"},
		{"2026-11-05T10:00:00Z", "2026-11-05T10:00:00Z", "", "", "to"},
		{"2026-11-05T11:00:00Z", "2026-11-05T10:00:00Z", "", "", "to"},
		{"2026-11-06T00:00:00Z", "", "", "", "to"}, // after the default to, now
		{"", "", "", "Not_A_Name", "namespace"},
	}
	for _, tc := range bad {
		_, err := ParseUsageQuery(now, tc.from, tc.to, tc.gran, tc.ns)
		require.Error(t, err, "%+v", tc)
		e := apierr.From(err)
		require.Equal(t, apierr.BadRequest, e.Code, "%+v: %v", tc, err)
		require.Equal(t, tc.field, e.Field, "%+v: %v", tc, err)
	}
}

func hourOf(h int) time.Time { return time.Date(2026, 11, 5, h, 0, 0, 0, time.UTC) }

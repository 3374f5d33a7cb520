package wire

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestParseQueueStatsQuery(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 29, 6, 30, 20, 0, time.UTC)
	q, err := ParseQueueStatsQuery(now, "", "", "")
	require.NoError(t, err)
	require.Equal(t, QueueStatsQuery{From: time.Date(2026, 11, 29, 5, 31, 0, 0, time.UTC), To: time.Date(2026, 11, 29, 6, 31, 0, 0, time.UTC), Step: "1m"}, q,
		"an hour of minutes up to the end of now's")
	q, err = ParseQueueStatsQuery(now, "2026-11-01T10:20:00Z", "", "1h")
	require.NoError(t, err)
	require.Equal(t, time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC), q.From, "from moves back to its hour")
	require.Equal(t, time.Date(2026, 11, 29, 7, 0, 0, 0, time.UTC), q.To, "to moves on to its hour's end")
	_, err = ParseQueueStatsQuery(now, "2026-10-30T07:00:00Z", "", "1h")
	require.NoError(t, err, "30 days of hours")

	for _, c := range []struct{ from, to, step, field string }{
		{"", "", "5m", "step"},
		{"yesterday", "", "", "from"},
		{"", "soon", "", "to"},
		{"2026-11-27T06:00:00Z", "", "1m", "from"}, // over 48 hours of minutes
		{"2026-10-01T00:00:00Z", "", "1h", "from"}, // over 30 days of hours
		{"2026-11-29T06:00:00Z", "2026-11-29T06:00:00Z", "", "to"},
	} {
		_, err := ParseQueueStatsQuery(now, c.from, c.to, c.step)
		var fe *FieldError
		require.True(t, errors.As(err, &fe), "%+v: %v", c, err)
		require.Equal(t, c.field, fe.Field, "%+v", c)
	}
}

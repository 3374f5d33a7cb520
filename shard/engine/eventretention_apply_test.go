package engine

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/shard/job"
)

// A namespace's retention is recorded within the plans' bounds, only for
// a namespace with state here; out of bounds is refused naming the field
// and leaves the record as it was.
func TestEventRetentionRecord(t *testing.T) {
	t.Parallel()
	f := setupFSM(t)
	_, _, ok := ReadEventRetention(f.db, testNS)
	require.False(t, ok, "a namespace never told has no record")
	require.Equal(t, false, f.apply(EventRetentionSet.Type, &EventRetentionCmd{NS: testNS, Hours: 2, Events: 5000}),
		"nothing is recorded for a namespace without state")
	_, _, ok = ReadEventRetention(f.db, testNS)
	require.False(t, ok)

	f.enqueue(&job.Job{Queue: "q"})
	require.Equal(t, true, f.apply(EventRetentionSet.Type, &EventRetentionCmd{NS: testNS, Hours: 2, Events: 5000}))
	h, n, ok := ReadEventRetention(f.db, testNS)
	require.True(t, ok)
	require.Equal(t, [2]int64{2, 5000}, [2]int64{h, n})

	for _, c := range []struct {
		field         string
		hours, events int64
	}{{"event_retention_hours", 0, 5000}, {"event_retention_hours", 721, 5000}, {"event_retention_events", 2, 999}, {"event_retention_events", 2, 10_000_001}} {
		err, _ := f.apply(EventRetentionSet.Type, &EventRetentionCmd{NS: testNS, Hours: c.hours, Events: c.events}).(error)
		require.Equal(t, apierr.BadRequest, apierr.CodeOf(err), "%+v", c)
		require.Contains(t, err.Error(), c.field)
	}
	h, n, _ = ReadEventRetention(f.db, testNS)
	require.Equal(t, [2]int64{2, 5000}, [2]int64{h, n}, "a refused command changed nothing")
	require.Equal(t, EventRetention{MaxAge: 2 * 3600e9, MaxCount: 5000}, EventRetentionOf(h, n))
}

package job

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestDecisions(t *testing.T) {
	t.Parallel()
	all := []State{Scheduled, Pending, Active, Completed, Retrying, Dead, Cancelled, Held}
	for _, s := range all {
		d, err := DecideCancel(s)
		switch s {
		case Scheduled, Pending, Retrying, Held:
			require.Equal(t, CancelNow, d)
			require.True(t, Allowed(s, Cancelled))
		case Active:
			require.Equal(t, CancelRequested, d)
			require.True(t, Allowed(Active, Cancelled), "a cancelling job settles as cancelled")
		default:
			var ce *ConflictError
			require.True(t, errors.As(err, &ce))
			require.Equal(t, s, ce.State)
			require.Contains(t, err.Error(), s.String())
		}
		to, err := DecideManualRetry(s)
		if s.Terminal() {
			require.Equal(t, Pending, to)
			require.True(t, Allowed(s, to))
		} else {
			require.ErrorContains(t, err, "cannot retry")
		}
		require.Equal(t, s == Active, DecideMove(s) != nil)
		require.Equal(t, s == Active, DecideDelete(s) != nil)
		require.Equal(t, s == Completed || s == Cancelled, Retained(s))
	}
	require.Equal(t, Cancelled, SettleAttempt(true, Completed))
	require.Equal(t, Pending, SettleAttempt(false, Pending))
}

func TestTimelineRecord(t *testing.T) {
	t.Parallel()
	var j Job
	j.Record(1, EvStarted, "")
	j.Record(2, EvProgress, "1")
	j.Record(3, EvFailed, strings.Repeat("é", 150))
	j.Record(4, EvProgress, "2")
	require.Len(t, j.Timeline, 3)
	require.Equal(t, Event{At: 4, Kind: EvProgress, Detail: "2"}, j.Timeline[2])
	require.LessOrEqual(t, len(j.Timeline[1].Detail), maxDetail)
	require.True(t, strings.HasPrefix(strings.Repeat("é", 150), j.Timeline[1].Detail), "cut on a rune boundary")
	for i := range 2 * MaxTimeline {
		j.Record(int64(10+i), EvMoved, "")
	}
	require.Len(t, j.Timeline, MaxTimeline)
	require.Equal(t, int64(10+2*MaxTimeline-1), j.Timeline[MaxTimeline-1].At)
	require.Equal(t, "retry_scheduled", EvRetryScheduled.String())
}

// A copy keeps its timeline's spare room, so that the next event of
// either writes into its own array: the copy and the original stay apart.
func TestCloneTimelineRoom(t *testing.T) {
	t.Parallel()
	var j Job
	j.Record(1, EvEnqueued, "")
	require.Equal(t, lifeEvents, cap(j.Timeline), "a new timeline has room for one run")
	j.Record(2, EvStarted, "worker w attempt 1")
	c := j.Clone()
	require.Equal(t, j.Timeline, c.Timeline)
	require.Equal(t, cap(j.Timeline), cap(c.Timeline))
	c.Record(3, EvCompleted, "")
	j.Record(4, EvFailed, "boom")
	require.Equal(t, []Event{{At: 1, Kind: EvEnqueued}, {At: 2, Kind: EvStarted, Detail: "worker w attempt 1"}, {At: 3, Kind: EvCompleted}}, c.Timeline)
	require.Equal(t, Event{At: 4, Kind: EvFailed, Detail: "boom"}, j.Timeline[2])
	require.Nil(t, (&Job{}).Clone().Timeline, "no timeline stays none")
}

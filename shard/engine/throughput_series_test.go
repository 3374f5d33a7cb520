package engine

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// ThroughputSeries lays the buckets noteDone keeps out by minute, and
// always sums to what Throughput averages.
func TestThroughputSeries(t *testing.T) {
	at := func(min int64) int64 { return (1_000_000+min)*int64(time.Minute) + int64(17*time.Second) }
	q := &QueueRecord{}
	require.Equal(t, []int64{0, 0, 0, 0, 0}, q.ThroughputSeries(at(0)), "a queue that never completed")

	q.noteDone(at(0))
	q.noteDone(at(0))
	q.noteDone(at(2))
	for _, tc := range []struct {
		now  int64
		want []int64
	}{
		{at(-1), []int64{0, 0, 0, 0, 0}}, // a clock behind the buckets
		{at(0), []int64{0, 0, 0, 0, 2}},
		{at(2), []int64{0, 0, 2, 0, 1}},
		{at(4), []int64{2, 0, 1, 0, 0}},
		{at(6), []int64{1, 0, 0, 0, 0}},
		{at(7), []int64{0, 0, 0, 0, 0}},
		{at(60), []int64{0, 0, 0, 0, 0}},
	} {
		got := q.ThroughputSeries(tc.now)
		require.Equal(t, tc.want, got, "minute %d", tc.now/int64(time.Minute)-1_000_000)
		var sum int64
		for _, n := range got {
			sum += n
		}
		require.InDelta(t, float64(sum)/throughputMinutes, q.Throughput(tc.now), 1e-9)
	}

	// A completion long after the last resets the buckets; the series follows.
	q.noteDone(at(30))
	require.Equal(t, []int64{0, 0, 0, 0, 1}, q.ThroughputSeries(at(30)))
	require.Equal(t, []int64{0, 1, 0, 0, 0}, q.ThroughputSeries(at(33)))
	require.Len(t, q.Done, throughputMinutes, "reading changed nothing")
}

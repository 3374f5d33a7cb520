package bench

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestBucketsAreContiguousAndOrdered(t *testing.T) {
	t.Parallel()
	prev := -1
	for _, v := range []uint64{0, 1, 255, 256, 258, 511, 512, 1 << 20, 1<<20 + 1<<13, 1 << 40, 1<<63 + 5, ^uint64(0)} {
		b := bucketOf(v)
		require.Greater(t, b, prev, "value %d", v)
		require.Less(t, b, buckets)
		prev = b
	}
	for i := range buckets - 1 {
		require.Less(t, bucketMid(i), bucketMid(i+1), "bucket %d", i)
		require.Equal(t, i, bucketOf(bucketMid(i)), "bucket %d mid %d", i, bucketMid(i))
	}
}

func TestQuantilesWithinOnePercent(t *testing.T) {
	t.Parallel()
	h := newHistogram()
	r := rand.New(rand.NewPCG(1, 2))
	var vals []time.Duration
	for range 100_000 {
		v := time.Duration(r.ExpFloat64() * float64(2*time.Millisecond))
		vals = append(vals, v)
		h.record(v)
	}
	slices.Sort(vals)
	for _, q := range []float64{0.5, 0.9, 0.99} {
		exact := vals[int(q*float64(len(vals)))-1]
		got := h.quantile(q)
		require.InDelta(t, float64(exact), float64(got), float64(exact)/100, "q%v", q)
	}
	s := h.summary()
	require.Equal(t, int64(100_000), s.Count)
	require.Equal(t, vals[len(vals)-1], s.Max)
}

func TestMergeAndEmpty(t *testing.T) {
	t.Parallel()
	a, b := newHistogram(), newHistogram()
	require.Equal(t, Latency{}, a.summary())
	a.record(time.Millisecond)
	b.record(3 * time.Millisecond)
	b.record(-time.Second) // clock oddities count as zero
	a.merge(b)
	s := a.summary()
	require.Equal(t, int64(3), s.Count)
	require.Equal(t, 3*time.Millisecond, s.Max)
	require.InDelta(t, float64(time.Millisecond), float64(s.P50), float64(time.Millisecond)/100)
}

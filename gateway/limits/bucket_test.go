package limits

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

var bucketT0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func bucketAt(d time.Duration) time.Time { return bucketT0.Add(d) }

func TestBucketStartsFullWithOneSecondOfRateAndRefillsAtTheRate(t *testing.T) {
	b := newBucket(10, bucketT0)
	for i := range 10 {
		ok, _ := b.take(bucketT0, 1)
		require.True(t, ok, "take %d of the burst", i)
	}
	ok, wait := b.take(bucketT0, 1)
	require.False(t, ok, "the burst is one second of the rate")
	require.Equal(t, 100*time.Millisecond, wait)
	require.Zero(t, b.remaining())
	require.Equal(t, time.Second, b.untilFull())

	ok, _ = b.take(bucketAt(99*time.Millisecond), 1)
	require.False(t, ok)
	ok, _ = b.take(bucketAt(100*time.Millisecond), 1)
	require.True(t, ok, "one token flows in every 100ms")

	// Idle for a minute: no more than the burst is saved up.
	b.fill(bucketAt(time.Minute))
	require.EqualValues(t, 10, b.remaining())
	require.Zero(t, b.untilFull())
}

func TestBucketLetsABatchOverTheBurstPassFromFullAndPayItBack(t *testing.T) {
	b := newBucket(10, bucketT0)
	ok, _ := b.take(bucketT0, 35) // 3.5 s of the rate at once
	require.True(t, ok, "a batch larger than the burst passes from a full bucket")
	require.Zero(t, b.remaining())

	ok, wait := b.take(bucketT0, 1)
	require.False(t, ok)
	require.Equal(t, 2600*time.Millisecond, wait, "25 tokens of debt and one more, at 10/s")
	ok, wait = b.take(bucketT0, 35)
	require.False(t, ok)
	require.Equal(t, 3500*time.Millisecond, wait, "a batch waits for a full bucket: the debt and the burst")

	ok, _ = b.take(bucketAt(3500*time.Millisecond), 35)
	require.True(t, ok)
	// Over 3.5 s, 70 passed from a burst of 10 and 35 of flow: the debt
	// is the difference, paid back before anything else passes.
	require.InDelta(t, -25, b.tokens, 1e-9)
}

func TestBucketGiveBackAndSetRate(t *testing.T) {
	b := newBucket(10, bucketT0)
	ok, _ := b.take(bucketT0, 10)
	require.True(t, ok)
	b.giveBack(4)
	require.EqualValues(t, 4, b.remaining())
	b.giveBack(100)
	require.EqualValues(t, 10, b.remaining(), "never over the burst")

	b.setRate(bucketT0, 4) // a smaller share: the tokens held shrink to its burst
	require.EqualValues(t, 4, b.remaining())
	ok, _ = b.take(bucketT0, 4)
	require.True(t, ok)
	b.setRate(bucketAt(500*time.Millisecond), 20) // 2 tokens flowed in at the old rate first
	require.EqualValues(t, 2, b.remaining())
	require.Equal(t, 900*time.Millisecond, b.untilFull(), "18 more at 20/s")
}

func TestBucketWithoutRateNeverFills(t *testing.T) {
	b := newBucket(0, bucketT0)
	ok, wait := b.take(bucketAt(time.Hour), 1)
	require.False(t, ok)
	require.Greater(t, wait, 1000*time.Hour)
}

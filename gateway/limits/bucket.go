package limits

import (
	"math"
	"time"
)

// bucket is a token bucket: it fills at rate tokens a second up to burst,
// one second of rate (so a tenant idle for a while may send a second's
// worth at once, and never more). A take of n passes when the bucket
// holds min(n, burst) tokens and leaves it n lower, in debt if need be:
// a batch larger than a second's worth still passes, from a full bucket,
// and the time it borrowed is paid back before anything else passes, so
// the long-run rate is the rate whatever the sizes. Not safe for
// concurrent use (rateLimiter locks it).
type bucket struct {
	rate   float64 // tokens a second
	burst  float64
	tokens float64 // may be negative: a debt
	last   time.Time
}

func newBucket(rate float64, now time.Time) bucket {
	return bucket{rate: rate, burst: rate, tokens: rate, last: now}
}

// fill adds what flowed in since the last call.
func (b *bucket) fill(now time.Time) {
	if d := now.Sub(b.last); d > 0 {
		b.tokens = min(b.burst, b.tokens+d.Seconds()*b.rate)
		b.last = now
	}
}

// take takes n tokens if it can; if not, it says how long until it could.
func (b *bucket) take(now time.Time, n float64) (bool, time.Duration) {
	b.fill(now)
	if b.burst <= 0 { // a limit of zero: nothing passes
		return false, math.MaxInt64
	}
	need := min(n, b.burst)
	if b.tokens >= need {
		b.tokens -= n
		return true, 0
	}
	return false, b.until(need)
}

// giveBack returns n tokens a take took for a request refused after all.
func (b *bucket) giveBack(n float64) { b.tokens = min(b.burst, b.tokens+n) }

// setRate changes the rate from now on; the tokens held stay, up to the
// new burst.
func (b *bucket) setRate(now time.Time, rate float64) {
	b.fill(now)
	b.rate, b.burst = rate, rate
	b.tokens = min(b.tokens, b.burst)
}

// remaining is the whole tokens held (what could pass at once).
func (b *bucket) remaining() int64 { return max(0, int64(b.tokens)) }

// untilFull is how long until the bucket is full again.
func (b *bucket) untilFull() time.Duration { return b.until(b.burst) }

// until is how long until the bucket holds n tokens; a very long time for
// a bucket that does not fill.
func (b *bucket) until(n float64) time.Duration {
	if b.tokens >= n {
		return 0
	}
	if b.rate <= 0 {
		return math.MaxInt64
	}
	secs := (n - b.tokens) / b.rate
	if secs >= math.MaxInt64/float64(time.Second) {
		return math.MaxInt64
	}
	return time.Duration(secs * float64(time.Second))
}

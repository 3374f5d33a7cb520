package job

import (
	"fmt"
	"hash/fnv"
	"time"

	"github.com/jobbie/jobbie/wire"
)

// Backoff strategies.
const (
	BackoffNone        = wire.BackoffNone
	BackoffFixed       = wire.BackoffFixed
	BackoffLinear      = wire.BackoffLinear
	BackoffExponential = wire.BackoffExponential
)

// Defaults of the seed design.
const (
	DefaultMaxRetries = 3
	DefaultBackoff    = BackoffExponential
	DefaultBaseDelay  = 5 * time.Second
	DefaultMaxDelay   = 10 * time.Minute
	// JitterFraction is the most a retry delay is stretched by jitter, so
	// that jobs failing together do not all retry in the same instant.
	JitterFraction = 0.1
)

// ValidBackoff reports whether s names a strategy.
func ValidBackoff(s string) error {
	switch s {
	case BackoffNone, BackoffFixed, BackoffLinear, BackoffExponential:
		return nil
	}
	return fmt.Errorf("retry_backoff %q is not one of none, fixed, linear, exponential", s)
}

// RetryDelay is the delay before the retry that follows failed attempt n
// (n >= 1): none 0; fixed base; linear base*n; exponential base*2^(n-1);
// then stretched by up to JitterFraction and capped at max. The jitter is a
// hash of the job id and attempt, so every replica computes the same delay.
func RetryDelay(strategy string, base, max time.Duration, n int, jobID string) time.Duration {
	if n < 1 {
		n = 1
	}
	var d time.Duration
	switch strategy {
	case BackoffNone:
		return 0
	case BackoffFixed:
		d = base
	case BackoffLinear:
		d = base * time.Duration(n)
		if d/time.Duration(n) != base { // overflow
			d = max
		}
	default:
		d = base
		for i := 1; i < n && d < max; i++ {
			d *= 2
		}
	}
	if d > max || d < 0 {
		d = max
	}
	d += time.Duration(float64(d) * JitterFraction * jitter(jobID, n))
	if d > max {
		d = max
	}
	return d
}

// jitter is a deterministic number in [0, 1).
func jitter(jobID string, n int) float64 {
	h := fnv.New64a()
	h.Write([]byte(jobID))
	h.Write([]byte{byte(n), byte(n >> 8)})
	return float64(h.Sum64()>>11) / float64(1<<53)
}

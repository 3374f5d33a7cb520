package client

import (
	"context"
	"math/rand/v2"
	"time"
)

// Retry pacing of the worker runtime.
const (
	minBackoff    = 100 * time.Millisecond
	maxBackoff    = 5 * time.Second
	maxRetryAfter = 30 * time.Second // the most of a Retry-After honoured
)

// backoff yields growing, jittered delays; a Retry-After from the server
// takes precedence.
type backoff struct{ n int }

func (b *backoff) next(err error) time.Duration {
	if e, ok := AsError(err); ok && e.RetryAfter > 0 {
		b.n++
		return min(e.RetryAfter, maxRetryAfter)
	}
	d := min(minBackoff<<min(b.n, 16), maxBackoff)
	b.n++
	return d/2 + rand.N(d/2+1)
}

func (b *backoff) reset() { b.n = 0 }

// sleepCtx waits d or until ctx is done; it reports whether d elapsed.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

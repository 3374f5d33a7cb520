package client

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	mrand "math/rand/v2"
	"net/http"
	"time"

	"github.com/jobbie/jobbie/wire"
)

// RetryPolicy is how a Client sends a request again after a 429, a 502,
// 503 or 504, or a network error: with growing, jittered delays, a
// Retry-After from the server taking precedence. A request is retried
// only where sending it twice cannot do twice what it does: a GET, and
// the creating POSTs, which carry an Idempotency-Key (docs/api/README.md,
// "Idempotency"); any other call's error is the caller's. The worker
// runtime paces its fetch loop (which goes on until stopped) and its
// acks and fails (5 sends) by the same delays.
type RetryPolicy struct {
	// MaxAttempts is how many times a request is sent in all, the first
	// included; 1 sends it once.
	MaxAttempts int
	// MaxElapsed is how long after the first send a retry may still
	// start; the request's context bounds it too.
	MaxElapsed time.Duration
	// MinBackoff is the first delay; each retry doubles it, up to
	// MaxBackoff, and waits a random time between half of it and all of it.
	MinBackoff, MaxBackoff time.Duration
	// MaxRetryAfter is the longest Retry-After honoured; a longer one
	// ends the retries (the error is returned).
	MaxRetryAfter time.Duration
}

// DefaultRetryPolicy is what New uses: 5 sends within 30 s, from 100 ms
// to 5 s apart, honouring a Retry-After of up to 30 s.
func DefaultRetryPolicy() RetryPolicy {
	return RetryPolicy{MaxAttempts: 5, MaxElapsed: 30 * time.Second,
		MinBackoff: 100 * time.Millisecond, MaxBackoff: 5 * time.Second, MaxRetryAfter: 30 * time.Second}
}

// WithRetryPolicy replaces the client's retry policy. Zero fields take
// DefaultRetryPolicy's.
func WithRetryPolicy(p RetryPolicy) Option {
	p = p.filled()
	return func(c *Client) { c.retry = p }
}

// WithRetryPolicy returns a copy of c that retries by p (zero fields:
// DefaultRetryPolicy's; MaxAttempts 1 sends every request once). The copy
// shares c's connections.
func (c *Client) WithRetryPolicy(p RetryPolicy) *Client {
	cp := *c
	cp.retry = p.filled()
	return &cp
}

// filled is p with its zero fields DefaultRetryPolicy's.
func (p RetryPolicy) filled() RetryPolicy {
	d := DefaultRetryPolicy()
	if p.MaxAttempts <= 0 {
		p.MaxAttempts = d.MaxAttempts
	}
	if p.MaxElapsed <= 0 {
		p.MaxElapsed = d.MaxElapsed
	}
	if p.MinBackoff <= 0 {
		p.MinBackoff = d.MinBackoff
	}
	if p.MaxBackoff < p.MinBackoff {
		p.MaxBackoff = max(d.MaxBackoff, p.MinBackoff)
	}
	if p.MaxRetryAfter <= 0 {
		p.MaxRetryAfter = d.MaxRetryAfter
	}
	return p
}

// WithoutRetries sends every request once: an error is the caller's to
// handle (a creating call still carries its Idempotency-Key, so the
// caller may send it again with the same key, WithIdempotencyKey).
func WithoutRetries() Option {
	return func(c *Client) { c.retry.MaxAttempts = 1 }
}

type idemKeyCtx struct{}

// WithIdempotencyKey makes the creating call made with ctx send key as
// its Idempotency-Key instead of a new random one: a call sent again
// later (another process, after a restart) with the same key and the
// same request gets the first answer, within 24 h.
func WithIdempotencyKey(ctx context.Context, key string) context.Context {
	return context.WithValue(ctx, idemKeyCtx{}, key)
}

// idempotencyKey is the key of a creating call: the caller's, or a new
// random one, kept for all its retries.
func idempotencyKey(ctx context.Context) string {
	if k, ok := ctx.Value(idemKeyCtx{}).(string); ok && k != "" {
		return k
	}
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// retryable reports whether a request may be sent again after err: a
// GET, or a creating POST with its key; and only after an error that may
// pass.
func retryable(method string, keyed bool, err error) bool {
	if method != http.MethodGet && !keyed {
		return false
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	if e, ok := AsError(err); ok {
		return e.Retryable()
	}
	return true // a network error: the request may or may not have arrived
}

// keyed reports whether a request takes an Idempotency-Key.
func keyed(method, path string) bool {
	return method == http.MethodPost && wire.IdempotentRoutes[path]
}

// backoff yields growing, jittered delays by a policy; a Retry-After from
// the server takes precedence.
type backoff struct {
	p RetryPolicy
	n int
}

func (b *backoff) next(err error) time.Duration {
	if e, ok := AsError(err); ok && e.RetryAfter > 0 {
		b.n++
		return min(e.RetryAfter, b.p.MaxRetryAfter)
	}
	d := min(b.p.MinBackoff<<min(b.n, 16), b.p.MaxBackoff)
	b.n++
	return d/2 + mrand.N(d/2+1)
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

package bench

import (
	"context"
	"strconv"
	"time"
)

// caller sends the bench's requests. Each producer and worker goroutine
// owns one, so request and response buffers are reused without locking.
// The response body returned by post is valid until the next call.
type caller interface {
	post(ctx context.Context, path, suffix string, body []byte, timeout time.Duration) (reply, error)
}

// reply is a response as the bench needs it.
type reply struct {
	status     int
	body       []byte
	retryAfter time.Duration
}

// header is one request header every call carries.
type header struct{ key, value string }

// transport makes callers for one target.
type transport interface {
	newCaller() caller
	close()
}

// parseRetryAfter reads a Retry-After header in seconds (the only form
// Jobbie sends).
func parseRetryAfter(v []byte) time.Duration {
	if len(v) == 0 {
		return 0
	}
	n, err := strconv.Atoi(string(v))
	if err != nil || n < 0 {
		return 0
	}
	return time.Duration(n) * time.Second
}

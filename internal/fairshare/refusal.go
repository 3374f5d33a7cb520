package fairshare

import (
	"context"
	"errors"
	"math"

	"github.com/jobbie/jobbie/internal/apierr"
)

// Refusal is what a caller answers when Acquire failed: 429 when the
// refused key's own work filled its share (ReasonKeyQueue,
// ReasonWaited), 503 when others' work kept the pool busy
// (ReasonPoolBusy) or the request ended while it waited; with
// Retry-After and the reason. whose names the key ("this namespace",
// "this tenant"), what the work ("heavy reads", "requests").
func Refusal(err error, whose, what string) error {
	var b *BusyError
	if !errors.As(err, &b) {
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return apierr.Retry(apierr.Unavailable, 1, "the request ended while it waited for a work slot (%s)", what)
		}
		return err
	}
	secs := max(1, int(math.Ceil(b.Retry.Seconds())))
	switch b.Reason {
	case ReasonKeyQueue:
		return apierr.Retry(apierr.RateLimited, secs, "too many of %s's %s are waiting for a work slot of the %s pool (%s); retry after %d s", whose, what, b.Pool, b.Reason, secs)
	case ReasonWaited:
		return apierr.Retry(apierr.RateLimited, secs, "%s's own %s held its share of the %s pool for longer than a request may wait (%s); retry after %d s", whose, what, b.Pool, b.Reason, secs)
	default:
		return apierr.Retry(apierr.Unavailable, secs, "the %s pool stayed busy with other work for longer than a request may wait (%s); retry after %d s", b.Pool, b.Reason, secs)
	}
}

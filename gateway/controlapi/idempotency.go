package controlapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/jobbie/jobbie/internal/controlclient"
	"github.com/jobbie/jobbie/wire"
)

// Idempotent is a tenant's create's Idempotency-Key, which a create of
// Admin sends to control when its context carries one (WithIdempotency):
// control keeps the first answer under it, per tenant, and Replayed says
// the answer was that of an earlier request with the key.
type Idempotent struct {
	Key      string
	Replayed bool
}

type idemCtxKey struct{}

// WithIdempotency is ctx carrying idem to the create called with it.
func WithIdempotency(ctx context.Context, idem *Idempotent) context.Context {
	return context.WithValue(ctx, idemCtxKey{}, idem)
}

// IdempotencyOf is ctx's Idempotent, nil when it carries none (for the
// implementations of Control).
func IdempotencyOf(ctx context.Context) *Idempotent {
	idem, _ := ctx.Value(idemCtxKey{}).(*Idempotent)
	return idem
}

// callKeyed is call for a create under idem's key: control answers a
// replay 200 with wire.IdempotencyReplayedHeader instead of want. The
// key makes the create safe to send again, so controlclient tries the
// next node after a lost answer too (a leader change).
func (h *HTTP) callKeyed(ctx context.Context, idem *Idempotent, method, path, requestID string, in any, want int, out any) error {
	r, err := h.c.DoWith(ctx, method, path, requestID, http.Header{wire.IdempotencyKeyHeader: {idem.Key}}, in)
	if err != nil {
		return err
	}
	replayed := r.Status == http.StatusOK && r.Header.Get(wire.IdempotencyReplayedHeader) == "true"
	if r.Status != want && !replayed {
		return &Error{Method: method, Path: path, Status: r.Status, RetryAfter: r.Header.Get("Retry-After"), Body: r.Body}
	}
	if err := json.Unmarshal(r.Body, out); err != nil {
		return fmt.Errorf("controlapi: %s %s: %w: %w", method, path, controlclient.ErrDecode, err)
	}
	idem.Replayed = replayed
	return nil
}

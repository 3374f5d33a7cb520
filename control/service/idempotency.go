package service

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/jobbie/jobbie/control/state"
	"github.com/jobbie/jobbie/internal/replica"
)

// Idempotency is a tenant's creating request's Idempotency-Key
// (docs/api/README.md, "Idempotency"), carried in the call's context:
// the first create the call proposes is wrapped in state.OpIdempotent
// under it, so the create and its record are one entry, and a repeat of
// the request gets the first one's result (Replayed) instead of a second
// create.
type Idempotency struct {
	Tenant string
	Key    string
	Hash   []byte // the request's: method, path, body

	used     atomic.Bool // one create per request is wrapped
	replayed atomic.Bool
}

// Replayed reports whether the call's create was answered from the
// record of an earlier request.
func (i *Idempotency) Replayed() bool { return i != nil && i.replayed.Load() }

type idemCtxKey struct{}

// WithIdempotency is ctx carrying idem for the service calls made with it.
func WithIdempotency(ctx context.Context, idem *Idempotency) context.Context {
	return context.WithValue(ctx, idemCtxKey{}, idem)
}

// idempotencyOf is ctx's Idempotency, nil when it carries none.
func idempotencyOf(ctx context.Context) *Idempotency {
	idem, _ := ctx.Value(idemCtxKey{}).(*Idempotency)
	return idem
}

// replayed reports whether the create of ctx's call gave back an earlier
// request's result: what the first did after its create (taking a
// backup) is not done again.
func replayed(ctx context.Context) bool { return idempotencyOf(ctx).Replayed() }

// proposeIdempotent proposes c wrapped under ctx's Idempotency-Key when it
// carries one not yet used by this call and op is a create a key may wrap
// (state.Wraps); ok is false when it proposed nothing.
func proposeIdempotent[C, R any](ctx context.Context, node *replica.Node, op replica.Op[C, R], c *C) (res R, ok bool, err error) {
	idem := idempotencyOf(ctx)
	if idem == nil || !state.Wraps(op.Type) || !idem.used.CompareAndSwap(false, true) {
		return res, false, nil
	}
	out, err := state.OpIdempotent.Propose(ctx, node, &state.IdemCmd{TenantID: idem.Tenant, Key: idem.Key, Hash: idem.Hash, Cmd: op.Command(c)})
	if err != nil {
		return res, true, err
	}
	if err := replica.Decode(out.Result, &res); err != nil {
		return res, true, fmt.Errorf("control: decode the result of %s kept under an Idempotency-Key: %w", op.Name, err)
	}
	idem.replayed.Store(out.Replayed)
	return res, true, nil
}

package service

import (
	"context"

	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/shard/engine"
)

// Idempotency is a creating request's Idempotency-Key and the hash of the
// request (method, path, body) the API read it with. The API puts it in
// the request's context (WithIdempotency); the creating calls propose
// through propose, which wraps their command in engine.IdemApply, and
// Replayed then tells the API whether the answer is a first one's.
type Idempotency struct {
	Key      string
	Hash     []byte
	replayed bool
}

// Replayed reports whether the call's answer was given back from the
// key's first request rather than made by this one.
func (i *Idempotency) Replayed() bool { return i.replayed }

type idemKey struct{}

// WithIdempotency returns ctx carrying i for the creating call it is
// passed to.
func WithIdempotency(ctx context.Context, i *Idempotency) context.Context {
	return context.WithValue(ctx, idemKey{}, i)
}

func idempotencyOf(ctx context.Context) *Idempotency {
	i, _ := ctx.Value(idemKey{}).(*Idempotency)
	return i
}

// propose proposes c under op, or, when ctx carries an Idempotency-Key,
// wrapped in engine.IdemApply with echo (what the answer needs beyond
// op's result). It returns op's result and the echo, of this apply or,
// for a repeat of the key's request, of the first: decoded from the
// record either way, so a first answer and its replays are the same.
func propose[C, R any](ctx context.Context, s *Service, ns string, op replica.Op[C, R], c *C, echo []byte) (R, []byte, error) {
	idem := idempotencyOf(ctx)
	if idem == nil {
		res, err := op.Propose(ctx, s.node, c)
		return res, echo, err
	}
	var zero R
	out, err := engine.IdemApply.Propose(ctx, s.node, &engine.IdemCmd{NS: ns, Key: idem.Key, Hash: idem.Hash, Echo: echo, Cmd: op.Command(c)})
	if err != nil {
		return zero, nil, err
	}
	var res R
	if err := replica.Decode(out.Result, &res); err != nil {
		return zero, nil, err
	}
	idem.replayed = out.Replayed
	return res, out.Echo, nil
}

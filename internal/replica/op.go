package replica

import (
	"context"
	"errors"
	"fmt"

	"github.com/jobbie/jobbie/internal/apierr"
)

// Op is one command type of a state machine, with the Go types of its
// command (C) and of its result (R). It is the one way a command is
// registered, encoded, proposed and answered, so a result never travels
// as an untyped value past this file:
//
//	var Enqueue = replica.Op[EnqueueCmd, []EnqueueResult]{Type: 1, Name: "enqueue"}
//	Enqueue.Handle(reg, e.applyEnqueue)       // the state machine
//	res, err := Enqueue.Propose(ctx, node, &c) // a proposer
type Op[C, R any] struct {
	Type CommandType
	Name string
}

// None is the result of a command that answers nothing but success.
type None = struct{}

// Handle registers apply as the handler of o's type.
func (o Op[C, R]) Handle(r *Registry, apply func(tx *Tx, c *C) (R, error)) {
	r.Register(o.Type, o.Name, func(tx *Tx, payload []byte) (any, error) {
		c := new(C)
		if err := decodeCommand(payload, c); err != nil {
			panic(fmt.Sprintf("replica: undecodable %s command: %v", o.Name, err))
		}
		res, err := apply(tx, c)
		if err != nil {
			return nil, err
		}
		return res, nil
	})
}

// Command encodes c as a command of o's type: the type byte, then c. The
// payload is shifted in place to make room for the type, which Encode's
// spare capacity usually allows without another allocation.
func (o Op[C, R]) Command(c *C) []byte {
	b := Encode(c)
	b = append(b, 0)
	copy(b[1:], b)
	b[0] = byte(o.Type)
	return b
}

// Proposer replicates commands: a Node, or a test's stand-in.
type Proposer interface {
	// Propose replicates cmd and returns its result, the business error
	// that refused it, or a replication failure (ErrNotLeader…).
	Propose(ctx context.Context, cmd []byte) (any, error)
	// Subject names the group in errors: "this shard", "the control plane".
	Subject() string
}

// Propose replicates c and returns its handler's result, or the business
// error that refused it, or a replication failure mapped to the error
// catalog: no leader (503, safe to retry), leadership lost after the
// append (503, outcome unknown), the caller's fairness key over its share
// of the pending queue (429) or the whole queue full (503), closed, or the
// caller's context ended before the command was queued.
func (o Op[C, R]) Propose(ctx context.Context, p Proposer, c *C) (R, error) {
	v, err := p.Propose(ctx, o.Command(c))
	return o.result(v, proposeError(p.Subject(), err))
}

// Result reads one outcome of a group applied by Local.
func (o Op[C, R]) Result(out Outcome) (R, error) { return o.result(out.Value, out.Err) }

func (o Op[C, R]) result(v any, err error) (R, error) {
	var zero R
	if err != nil {
		return zero, err
	}
	r, ok := v.(R)
	if !ok && v != nil {
		return zero, fmt.Errorf("replica: %s returned %T, want %T", o.Name, v, zero)
	}
	return r, nil
}

// Outcome is what one applied command gave: its result or its refusal.
type Outcome struct {
	Value any
	Err   error
}

// proposeError maps a replication failure to the error catalog, naming
// the group as subject ("this shard", "the control plane"). Business
// errors (already API errors) pass through.
func proposeError(subject string, err error) error {
	var ae *apierr.Error
	switch {
	case err == nil || errors.As(err, &ae):
		return err
	case errors.Is(err, ErrNotLeader):
		return apierr.Retry(apierr.NoLeader, 1, "%s has no leader yet; retry shortly", subject)
	case errors.Is(err, ErrLeadershipLost):
		return apierr.Retry(apierr.Unavailable, 1, "%s changed leader while this request was being replicated: it may or may not have been applied; check before sending it again", subject)
	case errors.Is(err, ErrKeyBusy):
		return apierr.Retry(apierr.RateLimited, 1, "too many of these writes are waiting for %s to replicate them; slow down and retry shortly", subject)
	case errors.Is(err, ErrBusy):
		return apierr.Retry(apierr.Unavailable, 1, "%s has too many writes waiting to be replicated; retry shortly", subject)
	case errors.Is(err, ErrClosed):
		return apierr.Retry(apierr.Unavailable, 1, "%s is shutting down", subject)
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return apierr.Retry(apierr.Unavailable, 1, "the request ended before %s replicated it", subject)
	}
	return fmt.Errorf("replica: propose to %s: %w", subject, err)
}

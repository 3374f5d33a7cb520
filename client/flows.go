package client

import (
	"context"
	"fmt"
	"net/url"
	"time"

	"github.com/jobbie/jobbie/wire"
)

// Chain runs jobs one after another. The enqueued job is the first step:
// Steps[0] names its queue (or leaves it empty) and has no payload. When a
// step completes, the next one is enqueued with the payload
// {"previous_result": <the step's result>, "payload": <the step's Payload>}.
// A worker that acks with StepExit stops the chain and runs OnExit; a step
// that dies runs OnFailure with the error. At most 100 steps.
type Chain struct {
	Steps     []ChainStep
	OnFailure *ChainStep
	OnExit    *ChainStep
}

// ChainStep is one step of a chain, or a handler. Payload is any
// JSON-encodable value. The job options are the step's own, as an
// EnqueueRequest's; zero fields take the step queue's defaults. Steps[0]
// is the enqueued job itself and takes the request's options instead.
type ChainStep struct {
	Queue   string
	Payload any

	Priority       Priority
	MaxRetries     *int // nil for the queue's default; new(0) means never retry
	RetryBackoff   Backoff
	RetryBaseDelay time.Duration
	RetryMaxDelay  time.Duration
	ExpireAfter    time.Duration
	LeaseDuration  time.Duration
	Tags           map[string]string
	// TraceParent and TraceState: the step's trace context; a step
	// without one continues the trace of the step before it.
	TraceParent string
	TraceState  string
}

// toWire is the chain as a wire.ChainSpec; nil stays nil.
func (ch *Chain) toWire() (*wire.ChainSpec, error) {
	if ch == nil {
		return nil, nil
	}
	w := &wire.ChainSpec{Steps: make([]wire.StepSpec, len(ch.Steps))}
	for i, s := range ch.Steps {
		step, err := s.toWire()
		if err != nil {
			return nil, fmt.Errorf("chain step %d: %w", i, err)
		}
		w.Steps[i] = *step
	}
	var err error
	if w.OnFailure, err = ch.OnFailure.toWire(); err != nil {
		return nil, fmt.Errorf("chain on_failure: %w", err)
	}
	if w.OnExit, err = ch.OnExit.toWire(); err != nil {
		return nil, fmt.Errorf("chain on_exit: %w", err)
	}
	return w, nil
}

func (s *ChainStep) toWire() (*wire.StepSpec, error) {
	if s == nil {
		return nil, nil
	}
	payload, err := marshalRaw(s.Payload)
	if err != nil {
		return nil, fmt.Errorf("payload: %w", err)
	}
	return &wire.StepSpec{Queue: s.Queue, Payload: payload, Priority: s.Priority, MaxRetries: s.MaxRetries,
		RetryBackoff: s.RetryBackoff, RetryBaseDelay: wire.Duration(s.RetryBaseDelay), RetryMaxDelay: wire.Duration(s.RetryMaxDelay),
		ExpireAfter: wire.Duration(s.ExpireAfter), LeaseDuration: wire.Duration(s.LeaseDuration), Tags: s.Tags,
		TraceParent: s.TraceParent, TraceState: s.TraceState}, nil
}

// Step statuses of an ack of a chain step.
const (
	StepContinue = wire.StepContinue
	StepExit     = wire.StepExit
)

// Dependency failure policies.
const (
	OnDependencyFailureCancel = wire.OnDependencyFailureCancel
	OnDependencyFailureRun    = wire.OnDependencyFailureRun
)

// AckStep completes a chain step with a step status: StepContinue moves
// the chain on, StepExit stops it (running its on_exit handler). Lease
// binds it to a lease, as for Ack.
func (c *Client) AckStep(ctx context.Context, jobID string, result any, stepStatus string, opts ...ReportOption) error {
	return c.ack(ctx, jobID, result, stepStatus, opts)
}

// Batch is the progress of a batch enqueued with BatchOptions. Failed
// counts dead or cancelled members; CallbackJobID is nil until every
// member finished.
type Batch = wire.Batch

// GetBatch returns a batch's progress; a batch of another namespace or
// tenant is not found.
func (c *Client) GetBatch(ctx context.Context, id string) (*Batch, error) {
	var out Batch
	if _, err := c.do(ctx, "GET", "/api/v1/batches/"+url.PathEscape(id), nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ChainView is where a chain stands: every step of its definition in
// order, with the job that runs it (and its state) once there is one.
type ChainView = wire.ChainView

// GetChain returns the chain job id is a step of; a job of no chain, or
// of another namespace or tenant, is not found.
func (c *Client) GetChain(ctx context.Context, id string) (*ChainView, error) {
	var out ChainView
	if _, err := c.do(ctx, "GET", "/api/v1/jobs/"+url.PathEscape(id)+"/chain", nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

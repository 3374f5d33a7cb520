package client

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jobbie/jobbie/wire"
)

// Priority is a job's priority tier; the server fetches critical before
// high before normal, FIFO within a tier. It is a plain string, as in the
// wire shapes.
type Priority = string

const (
	PriorityCritical = wire.PriorityCritical
	PriorityHigh     = wire.PriorityHigh
	PriorityNormal   = wire.PriorityNormal
)

// Backoff is a retry backoff strategy.
type Backoff = string

const (
	BackoffNone        = wire.BackoffNone
	BackoffFixed       = wire.BackoffFixed
	BackoffLinear      = wire.BackoffLinear
	BackoffExponential = wire.BackoffExponential
)

// EnqueueRequest describes one job to enqueue. Zero fields are left out so
// the server applies its (and the queue's) defaults.
type EnqueueRequest struct {
	Queue string
	// Payload is any JSON-encodable value; pass json.RawMessage to send
	// bytes that are already JSON.
	Payload  any
	Priority Priority
	// UniqueKey makes the enqueue a no-op (UniqueExisting in the result)
	// while a job with the same key exists within UniquePeriod, sent in
	// whole seconds.
	UniqueKey    string
	UniquePeriod time.Duration
	// MaxRetries is nil for the server's default; new(0) means never retry.
	MaxRetries     *int
	RetryBackoff   Backoff
	RetryBaseDelay time.Duration
	RetryMaxDelay  time.Duration
	// ScheduledAt delays the job until then; zero means now.
	ScheduledAt time.Time
	// ExpireAfter drops the job if it has not started within this long.
	ExpireAfter time.Duration
	// LeaseDuration is the job's lease when its worker asks for none
	// (before the queue's default); 1s to 12h.
	LeaseDuration time.Duration
	Tags          map[string]string
	// Chain makes the job the first step of a chain (see Chain).
	Chain *Chain
	// DependsOn holds the job until these jobs (of the same namespace)
	// completed; OnDependencyFailure is "cancel" (the default) or "run".
	DependsOn           []string
	OnDependencyFailure string
	// ConcurrencyKey counts the job against its queue's key_concurrency;
	// FairnessKey makes fetches take the queue's keys in turn. At most
	// 128 printable bytes each.
	ConcurrencyKey string
	FairnessKey    string
	// TraceParent and TraceState are the job's W3C trace context
	// (https://www.w3.org/TR/trace-context/), kept with the job and
	// given back to its worker; a bad one is a 400 naming it.
	TraceParent string
	TraceState  string
}

// MarshalJSON writes the request as a wire.EnqueueRequest: durations as
// "5s" strings, unique_period as seconds.
func (r EnqueueRequest) MarshalJSON() ([]byte, error) {
	w, err := r.toWire()
	if err != nil {
		return nil, err
	}
	return json.Marshal(w)
}

// toWire is the one conversion of a request to its wire shape, shared by
// Enqueue and EnqueueBatch.
func (r EnqueueRequest) toWire() (wire.EnqueueRequest, error) {
	payload, err := marshalRaw(r.Payload)
	if err != nil {
		return wire.EnqueueRequest{}, fmt.Errorf("payload: %w", err)
	}
	chain, err := r.Chain.toWire()
	if err != nil {
		return wire.EnqueueRequest{}, err
	}
	w := wire.EnqueueRequest{
		Queue:               r.Queue,
		Payload:             payload,
		Priority:            r.Priority,
		UniqueKey:           r.UniqueKey,
		MaxRetries:          r.MaxRetries,
		RetryBackoff:        r.RetryBackoff,
		RetryBaseDelay:      wire.Duration(r.RetryBaseDelay),
		RetryMaxDelay:       wire.Duration(r.RetryMaxDelay),
		ScheduledAt:         wire.Time(r.ScheduledAt),
		ExpireAfter:         wire.Duration(r.ExpireAfter),
		LeaseDuration:       wire.Duration(r.LeaseDuration),
		Tags:                r.Tags,
		Chain:               chain,
		DependsOn:           r.DependsOn,
		OnDependencyFailure: r.OnDependencyFailure,
		ConcurrencyKey:      r.ConcurrencyKey,
		FairnessKey:         r.FairnessKey,
		TraceParent:         r.TraceParent,
		TraceState:          r.TraceState,
	}
	if p := ceilSeconds(r.UniquePeriod); p > 0 {
		w.UniquePeriod = &p
	}
	return w, nil
}

// EnqueueResult is the answer to an enqueue: the job's id and state
// (Status). UniqueExisting is true when UniqueKey matched an existing job;
// JobID is then that job's id.
type EnqueueResult = wire.EnqueueResponse

// Enqueue adds one job. A request that names no TraceParent takes the trace context ctx
// carries (WithTraceParent; a handler's ctx carries its job's).
func (c *Client) Enqueue(ctx context.Context, req EnqueueRequest) (*EnqueueResult, error) {
	traced(ctx, &req.TraceParent, &req.TraceState)
	var out EnqueueResult
	if _, err := c.do(ctx, "POST", "/api/v1/enqueue", req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// BatchRequest enqueues several jobs in one call, optionally as a batch
// whose completion enqueues a callback job.
type BatchRequest struct {
	Jobs  []EnqueueRequest
	Batch *BatchOptions
}

// BatchOptions makes the jobs of a BatchRequest one batch: when all of them
// finish, the server enqueues CallbackPayload (any JSON-encodable value)
// on CallbackQueue.
type BatchOptions struct {
	CallbackQueue   string
	CallbackPayload any
	// TraceParent and TraceState: the callback job's trace context.
	TraceParent string
	TraceState  string
}

// MarshalJSON writes the request as a wire.BatchRequest.
func (r BatchRequest) MarshalJSON() ([]byte, error) {
	w := wire.BatchRequest{Jobs: make([]wire.EnqueueRequest, len(r.Jobs))}
	for i, j := range r.Jobs {
		var err error
		if w.Jobs[i], err = j.toWire(); err != nil {
			return nil, fmt.Errorf("job %d: %w", i, err)
		}
	}
	if b := r.Batch; b != nil {
		payload, err := marshalRaw(b.CallbackPayload)
		if err != nil {
			return nil, fmt.Errorf("callback payload: %w", err)
		}
		w.Batch = &wire.BatchSpec{CallbackQueue: b.CallbackQueue, CallbackPayload: payload,
			TraceParent: b.TraceParent, TraceState: b.TraceState}
	}
	return json.Marshal(w)
}

// BatchResult lists the new jobs' ids in request order (and, in Jobs,
// each one's outcome).
type BatchResult = wire.BatchResponse

// EnqueueBatch adds several jobs atomically. Each job, and the callback, that names no TraceParent takes the trace
// context ctx carries, as Enqueue's.
func (c *Client) EnqueueBatch(ctx context.Context, req BatchRequest) (*BatchResult, error) {
	if p, _ := TraceParentFrom(ctx); p != "" {
		req.Jobs = append([]EnqueueRequest(nil), req.Jobs...) // the caller's slice stays as it was
		for i := range req.Jobs {
			traced(ctx, &req.Jobs[i].TraceParent, &req.Jobs[i].TraceState)
		}
		if req.Batch != nil {
			b := *req.Batch
			traced(ctx, &b.TraceParent, &b.TraceState)
			req.Batch = &b
		}
	}
	var out BatchResult
	if _, err := c.do(ctx, "POST", "/api/v1/enqueue/batch", req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

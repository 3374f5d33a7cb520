package client

import (
	"context"
	"encoding/json"
	"time"
)

// Priority is a job's priority tier; the server fetches critical before
// high before normal, FIFO within a tier.
type Priority string

const (
	PriorityCritical Priority = "critical"
	PriorityHigh     Priority = "high"
	PriorityNormal   Priority = "normal"
)

// Backoff is a retry backoff strategy.
type Backoff string

const (
	BackoffNone        Backoff = "none"
	BackoffFixed       Backoff = "fixed"
	BackoffLinear      Backoff = "linear"
	BackoffExponential Backoff = "exponential"
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
	Tags        map[string]string
	// Chain makes the job the first step of a chain (see Chain).
	Chain *Chain
	// DependsOn holds the job until these jobs (of the same namespace)
	// completed; OnDependencyFailure is "cancel" (the default) or "run".
	DependsOn           []string
	OnDependencyFailure string
}

type enqueueWire struct {
	Queue          string            `json:"queue"`
	Payload        any               `json:"payload,omitempty"`
	Priority       Priority          `json:"priority,omitempty"`
	UniqueKey      string            `json:"unique_key,omitempty"`
	UniquePeriod   int64             `json:"unique_period,omitempty"`
	MaxRetries     *int              `json:"max_retries,omitempty"`
	RetryBackoff   Backoff           `json:"retry_backoff,omitempty"`
	RetryBaseDelay string            `json:"retry_base_delay,omitempty"`
	RetryMaxDelay  string            `json:"retry_max_delay,omitempty"`
	ScheduledAt    *time.Time        `json:"scheduled_at,omitempty"`
	ExpireAfter    string            `json:"expire_after,omitempty"`
	Tags           map[string]string `json:"tags,omitempty"`
	Chain          *Chain            `json:"chain,omitempty"`
	DependsOn      []string          `json:"depends_on,omitempty"`
	OnDepFailure   string            `json:"on_dependency_failure,omitempty"`
}

// MarshalJSON writes the request in the API's shape: durations as "5s"
// strings, unique_period as seconds.
func (r EnqueueRequest) MarshalJSON() ([]byte, error) {
	w := enqueueWire{
		Queue:          r.Queue,
		Payload:        r.Payload,
		Priority:       r.Priority,
		UniqueKey:      r.UniqueKey,
		UniquePeriod:   ceilSeconds(r.UniquePeriod),
		MaxRetries:     r.MaxRetries,
		RetryBackoff:   r.RetryBackoff,
		RetryBaseDelay: formatDuration(r.RetryBaseDelay),
		RetryMaxDelay:  formatDuration(r.RetryMaxDelay),
		ExpireAfter:    formatDuration(r.ExpireAfter),
		Tags:           r.Tags,
		Chain:          r.Chain,
		DependsOn:      r.DependsOn,
		OnDepFailure:   r.OnDependencyFailure,
	}
	if !r.ScheduledAt.IsZero() {
		t := r.ScheduledAt.UTC()
		w.ScheduledAt = &t
	}
	return json.Marshal(w)
}

// EnqueueResult is the answer to an enqueue.
type EnqueueResult struct {
	JobID  string `json:"job_id"`
	Status string `json:"status"` // "pending" or "scheduled"
	// UniqueExisting is true when UniqueKey matched an existing job; JobID
	// is then that job's id.
	UniqueExisting bool `json:"unique_existing"`
}

// Enqueue adds one job.
func (c *Client) Enqueue(ctx context.Context, req EnqueueRequest) (*EnqueueResult, error) {
	var out EnqueueResult
	if _, err := c.do(ctx, "POST", "/api/v1/enqueue", req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// BatchRequest enqueues several jobs in one call, optionally as a batch
// whose completion enqueues a callback job.
type BatchRequest struct {
	Jobs  []EnqueueRequest `json:"jobs"`
	Batch *BatchOptions    `json:"batch,omitempty"`
}

// BatchOptions makes the jobs of a BatchRequest one batch: when all of them
// finish, the server enqueues CallbackPayload on CallbackQueue.
type BatchOptions struct {
	CallbackQueue   string `json:"callback_queue,omitempty"`
	CallbackPayload any    `json:"callback_payload,omitempty"`
}

// BatchResult lists the new jobs' ids in request order.
type BatchResult struct {
	JobIDs  []string `json:"job_ids"`
	BatchID string   `json:"batch_id,omitempty"`
}

// EnqueueBatch adds several jobs atomically.
func (c *Client) EnqueueBatch(ctx context.Context, req BatchRequest) (*BatchResult, error) {
	var out BatchResult
	if _, err := c.do(ctx, "POST", "/api/v1/enqueue/batch", req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

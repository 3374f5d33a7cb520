package client

import (
	"context"
	"encoding/json"
	"net/url"
	"time"

	"github.com/jobbie/jobbie/wire"
)

// Job states.
const (
	StateScheduled = wire.StateScheduled
	StatePending   = wire.StatePending
	StateActive    = wire.StateActive
	StateCompleted = wire.StateCompleted
	StateRetrying  = wire.StateRetrying
	StateDead      = wire.StateDead
	StateCancelled = wire.StateCancelled
	StateHeld      = wire.StateHeld
)

// JobDetail is everything the server knows about a job. It is
// wire.JobDetail with durations as time.Duration, and nullable strings and
// numbers as plain values ("" or 0 when absent).
type JobDetail struct {
	ID             string
	Queue          string
	Payload        json.RawMessage
	State          string
	Priority       Priority
	Attempt        int
	MaxRetries     int
	RetryBackoff   Backoff
	RetryBaseDelay time.Duration
	RetryMaxDelay  time.Duration
	CreatedAt      time.Time
	ScheduledAt    *time.Time
	StartedAt      *time.Time
	CompletedAt    *time.Time
	FailedAt       *time.Time // the last failed attempt
	NextAttemptAt  *time.Time // while retrying
	LeaseExpiresAt *time.Time // while active
	ExpireAfter    time.Duration
	ExpiresAt      *time.Time    // when ExpireAfter drops it if it has not started
	LeaseDuration  time.Duration // its own lease for fetches that ask none; 0 when it has none
	UniqueKey      string
	UniquePeriod   time.Duration
	ConcurrencyKey string
	FairnessKey    string
	BatchID        string
	ChainID        string
	ChainStep      int
	DependsOn      []string
	CancelReason   string // why the server cancelled it ("dependency_failed")
	Tags           map[string]string
	Progress       *Progress
	Checkpoint     json.RawMessage // nil when none
	Result         json.RawMessage // nil when none
	Errors         []JobError
	Worker         *WorkerRef // the worker holding or last holding the job
	DeadReason     string     // why a dead job died ("retries_exhausted", "lease_expired", "expired")
	UpdatedAt      *time.Time
	Cancelling     bool // running, and a cancel was requested
	CancelledAt    *time.Time
	DiedAt         *time.Time
	Timeline       []TimelineEvent
	TraceParent    string // its W3C trace context, when it has one
	TraceState     string
	SchemaVersion  int64    // the version of its queue's payload schema the payload was checked against; 0 when none was
	Usage          *AIUsage // the model usage its workers reported, summed; nil when none
	HeldReason     string   // "budget" while an AI budget holds it (ai_budgets.go)
	HeldBudget     string   // the budget that holds it
}

// JobError is one failed attempt.
type JobError = wire.JobError

// WorkerRef names a worker.
type WorkerRef = wire.WorkerRef

// UnmarshalJSON reads a wire.JobDetail.
func (d *JobDetail) UnmarshalJSON(b []byte) error {
	var w wire.JobDetail
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	return d.fromWire(&w)
}

func (d *JobDetail) fromWire(w *wire.JobDetail) error {
	*d = JobDetail{
		ID: w.ID, Queue: w.Queue, Payload: rawOrNil(w.Payload), State: w.State,
		Priority: w.Priority, Attempt: w.Attempt, MaxRetries: w.MaxRetries, RetryBackoff: w.RetryBackoff,
		CreatedAt: deref(w.CreatedAt), ScheduledAt: w.ScheduledAt, StartedAt: w.StartedAt,
		CompletedAt: w.CompletedAt, FailedAt: w.FailedAt, NextAttemptAt: w.NextAttemptAt,
		LeaseExpiresAt: w.LeaseExpiresAt, ExpiresAt: w.ExpiresAt,
		UniqueKey: deref(w.UniqueKey), UniquePeriod: time.Duration(deref(w.UniquePeriod)) * time.Second,
		ConcurrencyKey: deref(w.ConcurrencyKey), FairnessKey: deref(w.FairnessKey),
		BatchID: deref(w.BatchID), ChainID: deref(w.ChainID), ChainStep: deref(w.ChainStep),
		DependsOn: w.DependsOn, CancelReason: deref(w.CancelReason), Tags: w.Tags,
		Checkpoint: rawOrNil(w.Checkpoint), Result: rawOrNil(w.Result), Errors: w.Errors,
		Worker: w.Worker, DeadReason: deref(w.DeadReason), UpdatedAt: w.UpdatedAt,
		Cancelling: w.Cancelling, CancelledAt: w.CancelledAt, DiedAt: w.DiedAt, Timeline: w.Timeline,
		TraceParent: w.TraceParent, TraceState: w.TraceState, SchemaVersion: w.SchemaVersion, Usage: w.Usage,
		HeldReason: w.HeldReason, HeldBudget: w.HeldBudget,
	}
	var err error
	if d.RetryBaseDelay, err = parseDuration("retry_base_delay", w.RetryBaseDelay); err != nil {
		return err
	}
	if d.RetryMaxDelay, err = parseDuration("retry_max_delay", w.RetryMaxDelay); err != nil {
		return err
	}
	if d.ExpireAfter, err = parseDuration("expire_after", deref(w.ExpireAfter)); err != nil {
		return err
	}
	if d.LeaseDuration, err = parseDuration("lease_duration", deref(w.LeaseDuration)); err != nil {
		return err
	}
	// Progress is read in the console's shape; other JSON is an error.
	d.Progress, err = decodeOptional[Progress](w.Progress)
	return err
}

// GetJob returns a job's full detail; a job of another namespace or
// tenant is not found.
func (c *Client) GetJob(ctx context.Context, id string) (*JobDetail, error) {
	var out JobDetail
	if _, err := c.do(ctx, "GET", "/api/v1/jobs/"+url.PathEscape(id), nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

package client

import (
	"context"
	"encoding/json"
	"net/url"
	"time"
)

// Job states.
const (
	StateScheduled = "scheduled"
	StatePending   = "pending"
	StateActive    = "active"
	StateCompleted = "completed"
	StateRetrying  = "retrying"
	StateDead      = "dead"
	StateCancelled = "cancelled"
	StateHeld      = "held"
)

// JobDetail is everything the server knows about a job.
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
	ExpireAfter    time.Duration
	UniqueKey      string
	UniquePeriod   time.Duration
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
	DeadReason     string     // why a dead job died ("retries_exhausted", "expired")
	Cancelling     bool       // running, and a cancel was requested
	Timeline       []TimelineEvent
}

// JobError is one failed attempt.
type JobError struct {
	Attempt   int       `json:"attempt"`
	Error     string    `json:"error"`
	Backtrace string    `json:"backtrace,omitempty"`
	At        time.Time `json:"at"`
}

// WorkerRef names a worker.
type WorkerRef struct {
	ID       string `json:"id"`
	Hostname string `json:"hostname,omitempty"`
}

type jobDetailWire struct {
	ID             string            `json:"id"`
	Queue          string            `json:"queue"`
	Payload        json.RawMessage   `json:"payload"`
	State          string            `json:"state"`
	Priority       Priority          `json:"priority"`
	Attempt        int               `json:"attempt"`
	MaxRetries     int               `json:"max_retries"`
	RetryBackoff   Backoff           `json:"retry_backoff"`
	RetryBaseDelay wireDuration      `json:"retry_base_delay"`
	RetryMaxDelay  wireDuration      `json:"retry_max_delay"`
	CreatedAt      time.Time         `json:"created_at"`
	ScheduledAt    *time.Time        `json:"scheduled_at"`
	StartedAt      *time.Time        `json:"started_at"`
	CompletedAt    *time.Time        `json:"completed_at"`
	ExpireAfter    wireDuration      `json:"expire_after"`
	UniqueKey      string            `json:"unique_key"`
	UniquePeriod   wireDuration      `json:"unique_period"`
	BatchID        *string           `json:"batch_id"`
	ChainID        *string           `json:"chain_id"`
	ChainStep      *int              `json:"chain_step"`
	DependsOn      []string          `json:"depends_on"`
	CancelReason   *string           `json:"cancel_reason"`
	Tags           map[string]string `json:"tags"`
	Progress       *Progress         `json:"progress"`
	Checkpoint     json.RawMessage   `json:"checkpoint"`
	Result         json.RawMessage   `json:"result"`
	Errors         []JobError        `json:"errors"`
	Worker         *WorkerRef        `json:"worker"`
	DeadReason     *string           `json:"dead_reason"`
	Cancelling     bool              `json:"cancelling"`
	Timeline       []TimelineEvent   `json:"timeline"`
}

// UnmarshalJSON reads the job detail shape; durations may be strings
// ("5s") or seconds.
func (d *JobDetail) UnmarshalJSON(b []byte) error {
	var w jobDetailWire
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*d = JobDetail{
		ID: w.ID, Queue: w.Queue, Payload: rawOrNil(w.Payload), State: w.State,
		Priority: w.Priority, Attempt: w.Attempt, MaxRetries: w.MaxRetries,
		RetryBackoff:   w.RetryBackoff,
		RetryBaseDelay: time.Duration(w.RetryBaseDelay),
		RetryMaxDelay:  time.Duration(w.RetryMaxDelay),
		CreatedAt:      w.CreatedAt, ScheduledAt: w.ScheduledAt,
		StartedAt: w.StartedAt, CompletedAt: w.CompletedAt,
		ExpireAfter: time.Duration(w.ExpireAfter), UniqueKey: w.UniqueKey,
		UniquePeriod: time.Duration(w.UniquePeriod), Tags: w.Tags,
		Progress: w.Progress, Checkpoint: rawOrNil(w.Checkpoint),
		Result: rawOrNil(w.Result), Errors: w.Errors, Worker: w.Worker,
		Cancelling: w.Cancelling, Timeline: w.Timeline,
	}
	if w.DeadReason != nil {
		d.DeadReason = *w.DeadReason
	}
	if w.BatchID != nil {
		d.BatchID = *w.BatchID
	}
	d.flowFields(&w)
	return nil
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

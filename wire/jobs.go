package wire

import (
	"encoding/json"
	"time"
)

// EnqueueRequest is one job as a producer sends it: POST /api/v1/enqueue,
// and each job of enqueue/batch. Durations are "5s"-style strings or
// numbers of seconds (Duration and Seconds write them); scheduled_at is
// an RFC 3339 time (Time writes it).
type EnqueueRequest struct {
	Queue          string          `json:"queue"`
	Payload        json.RawMessage `json:"payload,omitempty"`
	Priority       string          `json:"priority,omitempty"`
	UniqueKey      string          `json:"unique_key,omitempty"`
	UniquePeriod   *int64          `json:"unique_period,omitempty"` // seconds
	MaxRetries     *int            `json:"max_retries,omitempty"`
	RetryBackoff   string          `json:"retry_backoff,omitempty"`
	RetryBaseDelay json.RawMessage `json:"retry_base_delay,omitempty"`
	RetryMaxDelay  json.RawMessage `json:"retry_max_delay,omitempty"`
	ScheduledAt    json.RawMessage `json:"scheduled_at,omitempty"`
	ExpireAfter    json.RawMessage `json:"expire_after,omitempty"`
	// LeaseDuration is the job's lease when a fetch names none (before the
	// queue's default): MinLease to MaxLease.
	LeaseDuration json.RawMessage   `json:"lease_duration,omitempty"`
	Tags          map[string]string `json:"tags,omitempty"`
	// Flows: a chain of steps, or jobs this one waits for.
	Chain               *ChainSpec `json:"chain,omitempty"`
	DependsOn           []string   `json:"depends_on,omitempty"`
	OnDependencyFailure string     `json:"on_dependency_failure,omitempty"`
	// Keyed fairness within the queue: jobs of one concurrency_key count
	// against the queue's key_concurrency; fetches take the queue's
	// fairness_keys in turn. At most MaxFairnessKey printable bytes each.
	ConcurrencyKey string `json:"concurrency_key,omitempty"`
	FairnessKey    string `json:"fairness_key,omitempty"`
	// TraceParent and TraceState are the job's W3C trace context
	// (CheckTraceParent, CheckTraceState), kept with the job and given
	// back unchanged. The single enqueue takes them from its headers too
	// (TraceParentHeader); a batch's headers apply to each job that names
	// neither.
	TraceParent string `json:"traceparent,omitempty"`
	TraceState  string `json:"tracestate,omitempty"`
}

// EnqueueResponse is the answer to an enqueue (201, or 200 when a unique
// key matched an existing job, whose id it then names).
type EnqueueResponse struct {
	JobID          string `json:"job_id"`
	Status         string `json:"status"` // the job's state
	UniqueExisting bool   `json:"unique_existing"`
}

// BatchRequest is POST /api/v1/enqueue/batch: jobs enqueued atomically,
// as a batch with a callback when Batch is set.
type BatchRequest struct {
	Jobs  []EnqueueRequest `json:"jobs"`
	Batch *BatchSpec       `json:"batch,omitempty"`
}

// BatchResponse lists the jobs' ids in request order, and each one's
// outcome.
type BatchResponse struct {
	JobIDs  []string          `json:"job_ids"`
	BatchID string            `json:"batch_id,omitempty"`
	Jobs    []EnqueueResponse `json:"jobs"`
}

// FetchRequest is a worker's long-poll for a job: POST /api/v1/fetch.
type FetchRequest struct {
	Queues        []string `json:"queues"`
	WorkerID      string   `json:"worker_id,omitempty"`
	Hostname      string   `json:"hostname,omitempty"`
	Timeout       *float64 `json:"timeout,omitempty"`        // seconds; see FetchWait
	LeaseDuration *float64 `json:"lease_duration,omitempty"` // seconds; see LeaseFor
}

// FetchBatchRequest is POST /api/v1/fetch/batch: up to Max jobs in one
// long-poll. Max 0 leases none: the long-poll of a worker with no room
// for a job, waiting only for what the answer tells it besides jobs (its
// cancelled jobs, its drain); it needs a worker_id.
type FetchBatchRequest struct {
	FetchRequest
	Max *int `json:"max,omitempty"` // 0..MaxFetchBatch; default DefaultFetchBatch
}

// FetchedJob is a job handed to a worker: the body of a fetch, and each
// job of a fetch/batch.
type FetchedJob struct {
	JobID         string            `json:"job_id"`
	Queue         string            `json:"queue"`
	Payload       json.RawMessage   `json:"payload"`
	Attempt       int               `json:"attempt"`
	MaxRetries    int               `json:"max_retries"`
	LeaseDuration float64           `json:"lease_duration"` // seconds
	Checkpoint    json.RawMessage   `json:"checkpoint"`     // what an earlier attempt saved, or null
	Tags          map[string]string `json:"tags"`
	// LeaseToken names this lease of the job: sent back with ack, fail and
	// heartbeat, it makes them apply to this lease only (409
	// lease_mismatch once the lease ran out and the job went to another
	// worker). Opaque: pass it back unchanged.
	LeaseToken string `json:"lease_token"`
	// TraceParent and TraceState are the trace context the job was
	// enqueued with, when it had one.
	TraceParent string `json:"traceparent,omitempty"`
	TraceState  string `json:"tracestate,omitempty"`
}

// FetchBatchResponse is the answer to fetch/batch: empty when the wait
// ended with no job. Cancels are jobs leased to the request's worker_id
// that were cancelled while it held them and that no answer told it of
// yet: a waiting fetch/batch answers as soon as one is (the worker stops
// them, and settles them with an ack or fail).
type FetchBatchResponse struct {
	Jobs    []FetchedJob `json:"jobs"`
	Cancels []JobCancel  `json:"cancels,omitempty"`
}

// JobCancel names a job cancelled while a worker ran it, and its lease.
type JobCancel struct {
	JobID      string `json:"job_id"`
	LeaseToken string `json:"lease_token"`
}

// AckRequest completes a job: POST /api/v1/ack/{id}.
type AckRequest struct {
	Result     json.RawMessage `json:"result,omitempty"`
	WorkerID   string          `json:"worker_id,omitempty"`
	StepStatus string          `json:"step_status,omitempty"` // a chain step's StepContinue or StepExit
	LeaseToken string          `json:"lease_token,omitempty"` // the fetched job's; see FetchedJob
	Usage      *AIUsage        `json:"usage,omitempty"`       // model usage to add to the job's (ai.go)
}

// StatusResponse is an answer that only says a state: an ack's
// ("completed", or "cancelled" when a cancel was requested while it ran)
// and a cancel's (CancelDone or CancelRequested).
type StatusResponse struct {
	Status string `json:"status"`
}

// AckBatchRequest completes many jobs of one worker: POST /api/v1/ack/batch.
type AckBatchRequest struct {
	Acks     []AckBatchEntry `json:"acks"`
	WorkerID string          `json:"worker_id,omitempty"`
}

// AckBatchEntry is one job's ack in a batch.
type AckBatchEntry struct {
	JobID      string          `json:"job_id"`
	Result     json.RawMessage `json:"result,omitempty"`
	StepStatus string          `json:"step_status,omitempty"`
	LeaseToken string          `json:"lease_token,omitempty"` // the fetched job's; see FetchedJob
	Usage      *AIUsage        `json:"usage,omitempty"`       // model usage to add to the job's (ai.go)
}

// AckBatchResponse holds each ack's outcome, in request order.
type AckBatchResponse struct {
	Results []AckBatchResult `json:"results"`
}

// AckBatchResult is one job's outcome: its settled status, or its error.
type AckBatchResult struct {
	JobID  string         `json:"job_id"`
	Status string         `json:"status,omitempty"`
	Error  *AckBatchError `json:"error,omitempty"`
}

// AckBatchError says why one ack of a batch was refused.
type AckBatchError struct {
	Code    ErrorCode `json:"code"`
	Message string    `json:"message"`
}

// ReleaseRequest gives back leases a worker will not work on: POST
// /api/v1/release. The gateway sends it for a worker whose connection
// closed before a fetch's answer reached it, and for a worker stream that
// closed holding jobs; a worker may send it itself. Only the worker
// holding a lease may release it, and only for the attempt it was leased
// for. A released job is pending again at once and the attempt does not
// count.
type ReleaseRequest struct {
	WorkerID string         `json:"worker_id"`
	Jobs     []ReleaseEntry `json:"jobs"` // 1..MaxFetchBatch
}

// ReleaseEntry names one lease: the job and the attempt it was fetched
// as, and the fetch's lease_token when it had one (an attempt number
// repeats after a release; the token does not).
type ReleaseEntry struct {
	JobID      string `json:"job_id"`
	Attempt    int    `json:"attempt"`
	LeaseToken string `json:"lease_token,omitempty"`
}

// ReleaseResponse lists the jobs released; the others were no longer
// leased to that worker for that attempt, and were left alone.
type ReleaseResponse struct {
	Released []string `json:"released"`
}

// ReasonLeaseExpired is the error of an attempt whose lease ran out, and
// the dead_reason of a job whose last retry did.
const ReasonLeaseExpired = "lease_expired"

// FailRequest reports a failed attempt: POST /api/v1/fail/{id}.
type FailRequest struct {
	Error      string `json:"error"`
	Backtrace  string `json:"backtrace,omitempty"`
	WorkerID   string `json:"worker_id,omitempty"`
	LeaseToken string `json:"lease_token,omitempty"` // the fetched job's; see FetchedJob
	// NonRetryable makes the job dead at once with dead_reason
	// non_retryable, whatever retries remain.
	NonRetryable bool     `json:"non_retryable,omitempty"`
	Usage        *AIUsage `json:"usage,omitempty"` // model usage to add to the job's (ai.go)
}

// FailResponse says what the failure led to.
type FailResponse struct {
	Status            string     `json:"status"` // retrying, pending (no backoff), dead or cancelled
	NextAttemptAt     *time.Time `json:"next_attempt_at,omitempty"`
	AttemptsRemaining int        `json:"attempts_remaining"`
	Reason            string     `json:"reason,omitempty"` // a dead job's dead_reason
}

// HeartbeatRequest extends the leases of a worker's jobs:
// POST /api/v1/heartbeat.
type HeartbeatRequest struct {
	WorkerID string                    `json:"worker_id,omitempty"`
	Jobs     map[string]HeartbeatEntry `json:"jobs"`
}

// HeartbeatEntry is what one job reports: progress and a checkpoint, both
// optional.
type HeartbeatEntry struct {
	Progress   json.RawMessage `json:"progress,omitempty"`
	Checkpoint json.RawMessage `json:"checkpoint,omitempty"`
	LeaseToken string          `json:"lease_token,omitempty"` // the fetched job's; see FetchedJob
	Usage      *AIUsage        `json:"usage,omitempty"`       // model usage to add to the job's (ai.go)
}

// HeartbeatResponse holds a status (Heartbeat*) per job id.
type HeartbeatResponse struct {
	Jobs map[string]StatusResponse `json:"jobs"`
	// Drain says the worker was drained: take no more jobs (see
	// WorkerDrainHeader).
	Drain bool `json:"drain,omitempty"`
}

// Progress is the shape of progress the console shows; a worker may send
// any JSON.
type Progress struct {
	Current int64  `json:"current"`
	Total   int64  `json:"total"`
	Message string `json:"message,omitempty"`
}

// JobDetail is GET /api/v1/jobs/{id}: everything about a job.
type JobDetail struct {
	ID             string          `json:"id"`
	Queue          string          `json:"queue"`
	Payload        json.RawMessage `json:"payload"`
	State          string          `json:"state"`
	Priority       string          `json:"priority"`
	Attempt        int             `json:"attempt"`
	MaxRetries     int             `json:"max_retries"`
	RetryBackoff   string          `json:"retry_backoff"`
	RetryBaseDelay string          `json:"retry_base_delay"`
	RetryMaxDelay  string          `json:"retry_max_delay"`
	CreatedAt      *time.Time      `json:"created_at"`
	ScheduledAt    *time.Time      `json:"scheduled_at"`
	StartedAt      *time.Time      `json:"started_at"`
	CompletedAt    *time.Time      `json:"completed_at"`
	FailedAt       *time.Time      `json:"failed_at"`
	NextAttemptAt  *time.Time      `json:"next_attempt_at"`
	LeaseExpiresAt *time.Time      `json:"lease_expires_at"`
	ExpireAfter    *string         `json:"expire_after"`
	ExpiresAt      *time.Time      `json:"expires_at"`
	LeaseDuration  *string         `json:"lease_duration,omitempty"` // the job's own, when it has one
	UniqueKey      *string         `json:"unique_key"`
	UniquePeriod   *int64          `json:"unique_period"` // seconds
	ConcurrencyKey *string         `json:"concurrency_key,omitempty"`
	FairnessKey    *string         `json:"fairness_key,omitempty"`
	TraceParent    string          `json:"traceparent,omitempty"` // its trace context, when it has one
	TraceState     string          `json:"tracestate,omitempty"`
	// SchemaVersion is the version of its queue's schema the payload was
	// checked against when the job was created; omitted when none was.
	SchemaVersion int64             `json:"schema_version,omitempty"`
	BatchID       *string           `json:"batch_id"`
	ChainID       *string           `json:"chain_id"`
	ChainStep     *int              `json:"chain_step"`
	DependsOn     []string          `json:"depends_on,omitempty"`
	CancelReason  *string           `json:"cancel_reason,omitempty"`
	Tags          map[string]string `json:"tags"`
	Progress      json.RawMessage   `json:"progress"`
	Checkpoint    json.RawMessage   `json:"checkpoint"`
	Result        json.RawMessage   `json:"result"`
	Errors        []JobError        `json:"errors"`
	Worker        *WorkerRef        `json:"worker"`
	DeadReason    *string           `json:"dead_reason,omitempty"`
	UpdatedAt     *time.Time        `json:"updated_at"`
	Cancelling    bool              `json:"cancelling,omitempty"`  // active, cancel requested
	Usage         *AIUsage          `json:"usage,omitempty"`       // model usage its workers reported, summed
	HeldReason    string            `json:"held_reason,omitempty"` // "budget": held by an AI budget until approved
	HeldBudget    string            `json:"held_budget,omitempty"` // the budget that holds it
	CancelledAt   *time.Time        `json:"cancelled_at,omitempty"`
	DiedAt        *time.Time        `json:"died_at,omitempty"`
	Timeline      []TimelineEvent   `json:"timeline"`
}

// JobError is one failed attempt.
type JobError struct {
	Attempt   int       `json:"attempt"`
	Error     string    `json:"error"`
	Backtrace string    `json:"backtrace,omitempty"`
	At        time.Time `json:"at"`
}

// WorkerRef names the worker of a job's current or last attempt.
type WorkerRef struct {
	ID       string `json:"id"`
	Hostname string `json:"hostname"`
}

// TimelineEvent is one entry of a job's timeline.
type TimelineEvent struct {
	At     time.Time `json:"at"`
	Event  string    `json:"event"`
	Detail string    `json:"detail,omitempty"`
}

// JobOpResponse is the answer to retrying or moving a job.
type JobOpResponse struct {
	JobID  string `json:"job_id"`
	Status string `json:"status"`
	Queue  string `json:"queue,omitempty"`
}

// MoveRequest is POST /api/v1/jobs/{id}/move.
type MoveRequest struct {
	Queue string `json:"queue"`
}

// DeadPage is GET /api/v1/dead: dead jobs, newest first.
type DeadPage struct {
	Jobs    []DeadJob `json:"jobs"`
	Cursor  *string   `json:"cursor"` // pass back for the next page; null on the last
	HasMore bool      `json:"has_more"`
}

// DeadJob is a dead job as listed.
type DeadJob struct {
	ID         string            `json:"id"`
	Queue      string            `json:"queue"`
	State      string            `json:"state"`
	Payload    json.RawMessage   `json:"payload"`
	CreatedAt  *time.Time        `json:"created_at"`
	DiedAt     *time.Time        `json:"died_at"`
	Attempt    int               `json:"attempt"`
	MaxRetries int               `json:"max_retries"`
	DeadReason string            `json:"dead_reason"`
	LastError  *string           `json:"last_error"`
	Tags       map[string]string `json:"tags"`
}

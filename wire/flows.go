package wire

import (
	"encoding/json"
	"time"
)

// StepSpec is one step of a chain, or its on_failure or on_exit handler:
// its queue, its payload, and the job options an enqueue takes, each step
// its own. Options left out take the step queue's defaults, as for an
// enqueue. The first step is the enqueued job itself and takes the
// request's payload and options, so it names none of its own.
type StepSpec struct {
	Queue          string            `json:"queue"`
	Payload        json.RawMessage   `json:"payload,omitempty"`
	Priority       string            `json:"priority,omitempty"`
	MaxRetries     *int              `json:"max_retries,omitempty"`
	RetryBackoff   string            `json:"retry_backoff,omitempty"`
	RetryBaseDelay json.RawMessage   `json:"retry_base_delay,omitempty"`
	RetryMaxDelay  json.RawMessage   `json:"retry_max_delay,omitempty"`
	ExpireAfter    json.RawMessage   `json:"expire_after,omitempty"`
	LeaseDuration  json.RawMessage   `json:"lease_duration,omitempty"`
	Tags           map[string]string `json:"tags,omitempty"`
	// TraceParent and TraceState: the step's job's trace context. A step
	// that names none continues the trace of the step before it.
	TraceParent string `json:"traceparent,omitempty"`
	TraceState  string `json:"tracestate,omitempty"`
}

// HasOptions reports whether the step names any job option.
func (s *StepSpec) HasOptions() bool {
	return s.Priority != "" || s.MaxRetries != nil || s.RetryBackoff != "" || len(s.RetryBaseDelay) > 0 ||
		len(s.RetryMaxDelay) > 0 || len(s.ExpireAfter) > 0 || len(s.LeaseDuration) > 0 || len(s.Tags) > 0
}

// ChainSpec is the "chain" of an enqueue. The request's own queue and
// payload are the first step's; steps[0] names that queue (or leaves it
// empty) and has no payload of its own. A job stores its chain as this
// JSON, so its fields only ever grow.
type ChainSpec struct {
	Steps     []StepSpec `json:"steps"`
	OnFailure *StepSpec  `json:"on_failure,omitempty"`
	OnExit    *StepSpec  `json:"on_exit,omitempty"`
}

// ChainNextPayload is the payload of a chain's next step.
type ChainNextPayload struct {
	PreviousResult json.RawMessage `json:"previous_result"` // the step's result, or null
	Payload        json.RawMessage `json:"payload"`         // the next step's own payload, or null
}

// ChainExitPayload is the payload of on_exit, when a step's ack said
// step_status "exit".
type ChainExitPayload struct {
	ChainID        string          `json:"chain_id"`
	ExitedStep     int             `json:"exited_step"`
	ExitedJobID    string          `json:"exited_job_id"`
	PreviousResult json.RawMessage `json:"previous_result"`
	Payload        json.RawMessage `json:"payload"`
}

// ChainFailurePayload is the payload of on_failure, when a step died.
type ChainFailurePayload struct {
	ChainID     string          `json:"chain_id"`
	FailedStep  int             `json:"failed_step"`
	FailedJobID string          `json:"failed_job_id"`
	Error       string          `json:"error"` // the last attempt's error
	DeadReason  string          `json:"dead_reason"`
	Payload     json.RawMessage `json:"payload"`
}

// BatchSpec is the "batch" object of enqueue/batch: a callback job once
// every job of the batch completed, died or was cancelled.
type BatchSpec struct {
	CallbackQueue   string          `json:"callback_queue"`
	CallbackPayload json.RawMessage `json:"callback_payload"`
	// TraceParent and TraceState: the callback job's trace context; when
	// left out, the enqueue's headers' (TraceParentHeader), if any.
	TraceParent string `json:"traceparent,omitempty"`
	TraceState  string `json:"tracestate,omitempty"`
}

// BatchCallback is the payload of a batch's callback job. Each id list
// holds at most the first MaxCallbackIDs ids, in id (creation) order.
type BatchCallback struct {
	BatchID         string          `json:"batch_id"`
	Succeeded       int             `json:"succeeded"`
	Failed          int             `json:"failed"`
	SucceededIDs    []string        `json:"succeeded_ids"`
	FailedIDs       []string        `json:"failed_ids"`
	CallbackPayload json.RawMessage `json:"callback_payload"`
}

// Batch is GET /api/v1/batches/{id}.
type Batch struct {
	ID            string  `json:"id"`
	Total         int     `json:"total"`
	Pending       int     `json:"pending"`
	Succeeded     int     `json:"succeeded"`
	Failed        int     `json:"failed"`
	CallbackQueue string  `json:"callback_queue"`
	CallbackJobID *string `json:"callback_job_id"`
	// CallbackState is the callback job's state once the batch fired
	// (null before, and once the callback job was pruned or deleted).
	CallbackState *string    `json:"callback_state"`
	CreatedAt     *time.Time `json:"created_at"`
	CompletedAt   *time.Time `json:"completed_at"`
}

// BatchList is GET /api/v1/batches: the namespace's batches, newest
// first, until a fired batch is pruned with the retention period. Pass
// Cursor back as ?cursor= for the next page.
type BatchList struct {
	Batches []Batch `json:"batches"`
	Cursor  *string `json:"cursor"` // null on the last page
	HasMore bool    `json:"has_more"`
}

// ChainView is GET /api/v1/jobs/{id}/chain: the chain a job is a step
// of, every step of its definition in order with the job that runs it
// once there is one.
type ChainView struct {
	ChainID string `json:"chain_id"`
	// Step is the asked job's own step (0-based).
	Step           int             `json:"step"`
	Steps          []ChainStepView `json:"steps"`
	OnFailureQueue *string         `json:"on_failure_queue"`
	OnExitQueue    *string         `json:"on_exit_queue"`
}

// ChainStepView is one step of a ChainView. JobID and State are null
// while no job runs the step: not reached yet, the chain stopped or
// failed before it, its job was pruned with the retention period, or the
// chain was enqueued before the shard indexed chain steps (then only the
// asked job's own step is known).
type ChainStepView struct {
	Step        int        `json:"step"`
	Queue       string     `json:"queue"` // the definition's; a step job moved since is in JobQueue
	JobID       *string    `json:"job_id"`
	JobQueue    *string    `json:"job_queue"`
	State       *string    `json:"state"`
	CreatedAt   *time.Time `json:"created_at"`
	CompletedAt *time.Time `json:"completed_at"`
}

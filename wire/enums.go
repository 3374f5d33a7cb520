package wire

// Job states, as they appear in every JSON shape that names one.
const (
	StateScheduled = "scheduled" // waiting for scheduled_at
	StatePending   = "pending"   // waiting for a worker
	StateActive    = "active"    // leased to a worker
	StateCompleted = "completed" // acked
	StateRetrying  = "retrying"  // failed, waiting for its backoff
	StateDead      = "dead"      // out of retries, or expired
	StateCancelled = "cancelled" // cancelled by a user or a failed dependency
	StateHeld      = "held"      // waiting for the jobs it depends on
)

// Priorities, highest first.
const (
	PriorityCritical = "critical"
	PriorityHigh     = "high"
	PriorityNormal   = "normal" // the default
)

// Retry backoffs.
const (
	BackoffExponential = "exponential" // the default
	BackoffLinear      = "linear"
	BackoffFixed       = "fixed"
	BackoffNone        = "none"
)

// Heartbeat statuses, one per job of a heartbeat.
const (
	HeartbeatOK     = "ok"
	HeartbeatCancel = "cancel" // cancelled while it ran: stop; ack or fail settles it as cancelled
	HeartbeatLost   = "lost"   // not active under this worker any more: stop working on it
)

// What cancelling a job did (CancelResponse.Status).
const (
	CancelDone      = "cancelled"  // it was waiting: cancelled at once
	CancelRequested = "cancelling" // it runs: its worker's waiting fetch/batch (cancels) or next heartbeat ("cancel") tells it
)

// Values of an ack's step_status, for a chain step.
const (
	StepContinue = "continue" // the default: the chain goes on
	StepExit     = "exit"     // the chain stops here (on_exit runs)
)

// Values of an enqueue's on_dependency_failure.
const (
	OnDependencyFailureCancel = "cancel" // the default
	OnDependencyFailureRun    = "run"
)

// Bulk actions.
const (
	BulkRetry          = "retry"
	BulkDelete         = "delete"
	BulkCancel         = "cancel"
	BulkMove           = "move"
	BulkRequeue        = "requeue"
	BulkChangePriority = "change_priority"
	BulkApprove        = "approve" // a job an AI budget holds runs, outside the budget
	BulkReject         = "reject"  // a job an AI budget holds is cancelled
)

// States of a background bulk operation.
const (
	BulkProcessing = "processing"
	BulkCompleted  = "completed"
	BulkCancelled  = "cancelled"
)

// Worker statuses in GET /api/v1/workers.
const (
	WorkerActive = "active"
	WorkerGone   = "gone" // unseen for 2 minutes
)

// Why a job is dead or cancelled (dead_reason, cancel_reason).
const (
	ReasonRetriesExhausted = "retries_exhausted"
	ReasonExpired          = "expired"
	ReasonDependencyFailed = "dependency_failed"
	ReasonNonRetryable     = "non_retryable" // a failure marked non_retryable (FailRequest)
	// ReasonBudgetExceeded: its usage passed a per-job limit of an AI
	// budget whose on_exceed is reject.
	ReasonBudgetExceeded = "budget_exceeded"
)

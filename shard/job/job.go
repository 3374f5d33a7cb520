package job

import "encoding/json"

// Job is the stored job record (encoded by Encode). Times are unix
// nanoseconds (0 = unset) and come from the leader's clock stamped into the
// Raft entry.
type Job struct {
	ID          string
	Queue       string
	Payload     json.RawMessage
	State       State
	Priority    Priority
	Attempt     int // attempts started so far
	MaxRetries  int
	Backoff     string
	BaseDelay   int64 // ns
	MaxDelay    int64 // ns
	CreatedAt   int64
	ScheduledAt int64 // when a scheduled job becomes pending
	StartedAt   int64 // start of the current or last attempt
	CompletedAt int64
	FailedAt    int64 // last failure
	NextAttempt int64 // when a retrying job becomes pending
	LeaseUntil  int64
	LeaseNs     int64 // lease length of the current attempt
	ExpireAfter int64 // ns; 0 = never
	ExpireAt    int64 // CreatedAt + ExpireAfter
	UniqueKey   string
	UniqueUntil int64 // 0 = until the job is terminal
	Tags        map[string]string
	Progress    json.RawMessage
	Checkpoint  json.RawMessage
	Result      json.RawMessage
	Errors      []AttemptError
	WorkerID    string
	Hostname    string
	DeadReason  string
	UpdatedAt   int64

	// Job management (appended to the record).
	CancelRequestedAt int64   // an active job marked cancelling; 0 = not
	CancelledAt       int64   // when it was cancelled
	DeadAt            int64   // when it entered dead (its dead-index time)
	PruneAt           int64   // when a completed or cancelled job is pruned
	Timeline          []Event // last MaxTimeline events, oldest first
}

// AttemptError records why one attempt failed.
type AttemptError struct {
	Attempt   int
	Error     string
	Backtrace string
	At        int64
}

// Dead reasons.
const (
	ReasonRetriesExhausted = "retries_exhausted"
	ReasonExpired          = "expired"
)

// AttemptsRemaining is the number of retries left after the one a failure
// of the current attempt schedules (the seed protocol's attempts_remaining:
// max_retries 5, first failure → 4).
func (j *Job) AttemptsRemaining() int {
	r := j.MaxRetries - j.Attempt
	if r < 0 {
		return 0
	}
	return r
}

// CanRetry reports whether a failure of the current attempt may be retried.
func (j *Job) CanRetry() bool { return j.Attempt <= j.MaxRetries }

// Expired reports whether the job's TTL has passed at now.
func (j *Job) Expired(now int64) bool { return j.ExpireAt != 0 && now >= j.ExpireAt }

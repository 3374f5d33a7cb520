package job

import "encoding/json"

// Job is the stored job record. Times are unix nanoseconds (0 = unset) and
// come from the leader's clock stamped into the Raft entry. Field tags are
// the on-disk encoding: never reuse a tag for another meaning.
type Job struct {
	ID          string            `codec:"id"`
	Queue       string            `codec:"q"`
	Payload     json.RawMessage   `codec:"p"`
	State       State             `codec:"s"`
	Priority    Priority          `codec:"pr"`
	Attempt     int               `codec:"a"` // attempts started so far
	MaxRetries  int               `codec:"mr"`
	Backoff     string            `codec:"bo"`
	BaseDelay   int64             `codec:"bd"` // ns
	MaxDelay    int64             `codec:"md"` // ns
	CreatedAt   int64             `codec:"ca"`
	ScheduledAt int64             `codec:"sa"` // when a scheduled job becomes pending
	StartedAt   int64             `codec:"st"` // start of the current or last attempt
	CompletedAt int64             `codec:"co"`
	FailedAt    int64             `codec:"fa"` // last failure
	NextAttempt int64             `codec:"na"` // when a retrying job becomes pending
	LeaseUntil  int64             `codec:"lu"`
	LeaseNs     int64             `codec:"ld"` // lease length of the current attempt
	ExpireAfter int64             `codec:"ea"` // ns; 0 = never
	ExpireAt    int64             `codec:"ex"` // CreatedAt + ExpireAfter
	UniqueKey   string            `codec:"uk"`
	UniqueUntil int64             `codec:"uu"` // 0 = until the job is terminal
	Tags        map[string]string `codec:"tg"`
	Progress    json.RawMessage   `codec:"pg"`
	Checkpoint  json.RawMessage   `codec:"cp"`
	Result      json.RawMessage   `codec:"r"`
	Errors      []AttemptError    `codec:"er"`
	WorkerID    string            `codec:"w"`
	Hostname    string            `codec:"h"`
	DeadReason  string            `codec:"dr"`
	UpdatedAt   int64             `codec:"ua"`
}

// AttemptError records why one attempt failed.
type AttemptError struct {
	Attempt   int    `codec:"a"`
	Error     string `codec:"e"`
	Backtrace string `codec:"b"`
	At        int64  `codec:"t"`
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

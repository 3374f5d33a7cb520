package job

import (
	"encoding/json"

	"github.com/jobbie/jobbie/wire"
)

// Job is the stored job record (encoded by Encode). Times are unix
// nanoseconds (0 = unset) and come from the leader's clock stamped into the
// Raft entry.
type Job struct {
	ID       string
	Queue    string
	Payload  json.RawMessage
	State    State
	Priority Priority
	// Flow holds the batch, chain and dependency flags (below); declared
	// here so the three bytes share a word and a Job stays within its
	// allocation class.
	Flow        Flow
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

	// Batches, chains and dependencies (appended to the record; see
	// shard/flows.go). Zero for a job that uses none of them.
	BatchID      string   // "batch_…" when enqueued in a batch with a callback
	ChainID      string   // "chain_…" when a step of a chain
	ChainStep    int      // 0-based index of this step in Chain's steps
	Chain        []byte   // the chain definition (JSON), carried by every step
	DependsOn    []string // ids of the jobs this one waits for
	DepsLeft     int      // dependencies not yet completed (held while > 0)
	CancelReason string   // why the engine cancelled it (e.g. dependency_failed)

	// OwnLeaseNs is the job's own lease_duration (ns), used when a fetch
	// names none; 0 = the queue's default or the fetch's (appended).
	OwnLeaseNs int64

	// Stored is what its namespace's stored-bytes gauge counts for this
	// record (AppendMetered): its key and fields before this one. 0 for a
	// record written before the shard metered usage, which counts nothing
	// until it is written again (appended).
	Stored int64

	// Keys are the job's concurrency and fairness keys, nil when it has
	// neither (appended after Stored, written only when set). Set at
	// enqueue and never changed, so copies share them; behind a pointer so
	// that the record of every unkeyed job stays in its allocation class.
	Keys *Keys

	// Trace is the job's W3C trace context, nil when it has none
	// (appended after Keys, written only when set). Set at enqueue and
	// never changed, so copies share it; behind a pointer for the reason
	// Keys is.
	Trace *Trace

	// Schema is the version of its queue's payload schema the job was
	// checked against, and those its chain's later steps were checked
	// against; nil when none was (appended after Trace, written only
	// when set). Set at enqueue and never changed, so copies share it;
	// behind a pointer for the reason Keys is.
	Schema *Schema
}

// Schema records which versions of their queues' schemas a job's payload
// and its chain's step payloads were checked against (0: not checked,
// the queue had none).
type Schema struct {
	Version uint32
	// Steps holds a chain's versions by step index, then its on_failure
	// handler's and its on_exit handler's; only on the chain's first job.
	Steps []uint32
}

// SchemaVersion is the version j's payload was checked against (0: none).
func (j *Job) SchemaVersion() uint32 {
	if j.Schema == nil {
		return 0
	}
	return j.Schema.Version
}

// Trace is a job's W3C trace context, as the producer sent it (validated
// by wire.CheckTraceParent and wire.CheckTraceState).
type Trace struct {
	Parent string // traceparent
	State  string // tracestate, or ""
}

// SetTrace gives j its trace context; no traceparent leaves Trace nil.
func (j *Job) SetTrace(parent, state string) {
	j.Trace = nil
	if parent != "" {
		j.Trace = &Trace{Parent: parent, State: state}
	}
}

// TraceParent and TraceState are j's trace context, or "".
func (j *Job) TraceParent() string {
	if j.Trace == nil {
		return ""
	}
	return j.Trace.Parent
}

func (j *Job) TraceState() string {
	if j.Trace == nil {
		return ""
	}
	return j.Trace.State
}

// Keys are a job's keys for fair sharing within its queue: Concurrency
// counts against the queue's key_concurrency, Fairness takes turns with
// the queue's other fairness keys at fetch.
type Keys struct {
	Concurrency string
	Fairness    string
}

// Keyed reports whether j has a concurrency or fairness key, so the
// engine keeps it in the keyed pending index.
func (j *Job) Keyed() bool { return j.Keys != nil }

// ConcurrencyKey is j's concurrency key, or "".
func (j *Job) ConcurrencyKey() string {
	if j.Keys == nil {
		return ""
	}
	return j.Keys.Concurrency
}

// FairnessKey is j's fairness key, or "".
func (j *Job) FairnessKey() string {
	if j.Keys == nil {
		return ""
	}
	return j.Keys.Fairness
}

// SetKeys gives j its keys; none leaves Keys nil.
func (j *Job) SetKeys(concurrency, fairness string) {
	j.Keys = nil
	if concurrency != "" || fairness != "" {
		j.Keys = &Keys{Concurrency: concurrency, Fairness: fairness}
	}
}

// Flow holds a job's batch, chain and dependency flags.
type Flow uint8

// Flow flags, on-disk values, never renumber.
const (
	FlowBatchCounted  Flow = 1 << 0 // its first terminal state was counted in its batch
	FlowChainAdvanced Flow = 1 << 1 // its chain moved on (next step or on_exit enqueued)
	FlowChainFailed   Flow = 1 << 2 // its chain's on_failure was enqueued
	FlowChainExit     Flow = 1 << 3 // its last ack said step_status "exit"
	FlowHasDependents Flow = 1 << 4 // some job depends on it (reverse edges exist)
	FlowRunOnDepFail  Flow = 1 << 5 // on_dependency_failure "run"
	// FlowChainIndexed: its chain's steps are in the chain index
	// (keys.ChainStep). Set by the enqueue that starts a chain and passed
	// on to each next step; chains of older logs lack it and stay out, so
	// those logs replay as they first applied.
	FlowChainIndexed Flow = 1 << 6
)

// Has reports whether every flag of f is set.
func (fl Flow) Has(f Flow) bool { return fl&f == f }

// InFlow reports whether j takes part in a batch, a chain or a dependency,
// so the engine looks further only for those jobs.
func (j *Job) InFlow() bool {
	return j.BatchID != "" || j.ChainID != "" || j.Flow.Has(FlowHasDependents)
}

// Reasons the engine cancels a job with.
const ReasonDependencyFailed = wire.ReasonDependencyFailed

// AttemptError records why one attempt failed.
type AttemptError struct {
	Attempt   int
	Error     string
	Backtrace string
	At        int64
}

// Dead reasons.
const (
	ReasonRetriesExhausted = wire.ReasonRetriesExhausted
	ReasonExpired          = wire.ReasonExpired
	ReasonLeaseExpired     = wire.ReasonLeaseExpired // the last attempt's lease ran out with no retries left
	ReasonNonRetryable     = wire.ReasonNonRetryable // its worker failed it as non-retryable
	ReasonBudgetExceeded   = wire.ReasonBudgetExceeded
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

// Lease starts an attempt of j for a worker at now: the fields the active
// state's index and the worker need. The caller moves j to Active.
func Lease(j *Job, workerID, hostname string, now, lease int64) {
	j.Attempt++
	j.StartedAt = now
	j.WorkerID, j.Hostname = workerID, hostname
	j.LeaseNs = lease
	j.LeaseUntil = now + lease
}

// LeaseAfter is Lease stamped after j's last lease: StartedAt is now, or
// one nanosecond past the previous StartedAt when the entries' clock has
// not moved past it (a new leader's clock that lags is held at the last
// stamp), so that LeaseOf names this lease alone. The lease still runs
// from now.
func LeaseAfter(j *Job, workerID, hostname string, now, lease int64) {
	at := max(now, j.StartedAt+1)
	Lease(j, workerID, hostname, now, lease)
	j.StartedAt = at
}

// Unlease undoes the attempt Lease started, for a worker that went away
// before the job was handed over: the attempt is not counted. The caller
// moves j back to Pending.
func Unlease(j *Job) {
	j.Attempt--
	j.WorkerID, j.Hostname = "", ""
}

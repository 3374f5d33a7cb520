package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

var (
	// ErrJobCancelled is the cause of a handler's context when the server
	// cancelled its job. The worker then fails it, which settles it as
	// cancelled at once (whatever the handler returned).
	ErrJobCancelled = errors.New("job cancelled")
	// ErrLeaseLost is the cause of a handler's context when a heartbeat
	// learns the job is no longer leased to this worker (the lease expired
	// and the job went to another worker). Nothing is reported for it.
	ErrLeaseLost = errors.New("job lease lost")
	// ErrWorkerShutdown is the cause of a handler's context when the worker
	// stopped waiting for it; the job is failed with this message.
	ErrWorkerShutdown = errors.New("worker_shutdown")
	// ErrDeliveryAborted is the cause of a pushed job's handler context
	// when the push delivery's request ended before the handler answered
	// (the dispatcher gave up on it or cancelled the job): nobody reads
	// the answer any more.
	ErrDeliveryAborted = errors.New("push delivery aborted")
)

// checkpointTimeout bounds the heartbeat that stores a checkpoint.
const checkpointTimeout = 10 * time.Second

// JobContext is a running job as its handler sees it.
type JobContext struct {
	ID         string
	Queue      string
	Payload    json.RawMessage
	Attempt    int
	MaxRetries int
	Tags       map[string]string
	// LastCheckpoint is what an earlier attempt saved with Checkpoint, or
	// nil: resume from it.
	LastCheckpoint json.RawMessage
	// LeaseDuration is the job's lease; the worker's heartbeats extend it.
	// A pushed job's is the time the dispatcher waits for the answer.
	LeaseDuration time.Duration
	// LeaseToken names the lease; the worker's heartbeats, ack and fail
	// send it, so they apply to this lease only. Empty for a pushed job.
	LeaseToken string
	// TraceParent and TraceState are the W3C trace context the job was
	// enqueued with (a scheduled run's is a trace of its own), when it
	// has one, pulled or pushed.
	TraceParent string
	TraceState  string

	w       *Worker // nil for a pushed job: its outcome is the HTTP answer
	base    context.Context
	cancel  context.CancelCauseFunc
	stopped atomic.Pointer[error] // ErrJobCancelled or ErrLeaseLost, set by the server
	claimed atomic.Bool           // its outcome has been (or is being) reported

	mu          sync.Mutex
	progress    *Progress
	progressVer uint64
	checkpoint  json.RawMessage // a pushed job's last Checkpoint, sent in its answer
	usage       aiPending       // ReportUsage's sums not yet sent (ai_usage.go)
}

func newJobContext(w *Worker, base context.Context, cancel context.CancelCauseFunc, j *Job) *JobContext {
	return &JobContext{
		ID: j.ID, Queue: j.Queue, Payload: j.Payload, Attempt: j.Attempt,
		MaxRetries: j.MaxRetries, Tags: j.Tags, LastCheckpoint: j.Checkpoint,
		LeaseDuration: j.LeaseDuration, LeaseToken: j.LeaseToken, TraceParent: j.TraceParent, TraceState: j.TraceState,
		w: w, base: base, cancel: cancel,
	}
}

// Decode unmarshals the payload into v.
func (j *JobContext) Decode(v any) error {
	if len(j.Payload) == 0 {
		return fmt.Errorf("client: job %s has no payload", j.ID)
	}
	return json.Unmarshal(j.Payload, v)
}

// Progress records the job's progress; the next heartbeat reports it (a
// pushed job's answer does).
func (j *JobContext) Progress(current, total int64, message string) {
	j.mu.Lock()
	j.progress = &Progress{Current: current, Total: total, Message: message}
	j.progressVer++
	j.mu.Unlock()
}

// Checkpoint stores v (any JSON-encodable value) on the server now, so a
// later attempt of this job starts with it in LastCheckpoint. It also
// extends the lease and reports pending progress. A pushed job has no
// way to reach the server while it runs: its last checkpoint goes in its
// answer, success or failure.
func (j *JobContext) Checkpoint(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("client: checkpoint of job %s: %w", j.ID, err)
	}
	if j.w == nil {
		j.mu.Lock()
		j.checkpoint = b
		j.mu.Unlock()
		return nil
	}
	p, ver := j.pendingProgress()
	ctx, cancel := context.WithTimeout(j.base, checkpointTimeout)
	defer cancel()
	res, err := j.w.c.Heartbeat(ctx, map[string]HeartbeatJob{j.ID: {Progress: p, Checkpoint: b, LeaseToken: j.LeaseToken}})
	if err != nil {
		return err
	}
	j.progressSent(ver)
	j.apply(res)
	return nil
}

// Cancelled reports whether the job should stop: the server cancelled it,
// its lease was lost, or the worker is shutting down. A long job checks it
// between steps, saves a Checkpoint and returns Err.
func (j *JobContext) Cancelled() bool { return j.Err() != nil }

// Err is ErrJobCancelled if the server cancelled the job, ErrLeaseLost if
// the job is no longer leased to this worker, ErrWorkerShutdown if the
// worker is shutting down, ErrDeliveryAborted if a pushed job's delivery
// ended, and nil otherwise.
func (j *JobContext) Err() error {
	if p := j.stopped.Load(); p != nil {
		return *p
	}
	if j.w != nil && j.w.stopping.Load() {
		return ErrWorkerShutdown
	}
	return nil
}

// serverStopped is the reason the server stopped the job, or nil.
func (j *JobContext) serverStopped() error {
	if p := j.stopped.Load(); p != nil {
		return *p
	}
	return nil
}

// apply acts on a heartbeat answer: a cancelled or lost job's context is
// cancelled with the reason.
func (j *JobContext) apply(res *HeartbeatResult) {
	switch {
	case res.Cancelled(j.ID):
		j.stop(ErrJobCancelled)
	case res.Lost(j.ID):
		j.stop(ErrLeaseLost)
	}
}

// stop cancels the handler's context with reason, the first time only.
func (j *JobContext) stop(reason error) {
	if j.stopped.CompareAndSwap(nil, &reason) {
		j.cancel(reason)
	}
}

// claim marks the job's outcome as taken care of; only the first caller
// gets true.
func (j *JobContext) claim() bool { return j.claimed.CompareAndSwap(false, true) }

func (j *JobContext) pendingProgress() (*Progress, uint64) {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.progress, j.progressVer
}

// progressSent forgets the progress a heartbeat delivered, unless it
// changed since.
func (j *JobContext) progressSent(ver uint64) {
	j.mu.Lock()
	if j.progressVer == ver {
		j.progress = nil
	}
	j.mu.Unlock()
}

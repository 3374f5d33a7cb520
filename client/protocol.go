package client

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/jobbie/jobbie/wire"
)

// FetchRequest asks for the next job of any of Queues.
type FetchRequest struct {
	Queues   []string
	WorkerID string
	Hostname string
	// Timeout is how long the server may hold the request waiting for a
	// job; zero uses the server's default (30s).
	Timeout time.Duration
	// LeaseDuration asks for a lease of this length; zero uses the
	// server's default (60s).
	LeaseDuration time.Duration
}

// toWire is the request as the API takes it; workerID fills an empty
// WorkerID.
func (r FetchRequest) toWire(workerID string) wire.FetchRequest {
	w := wire.FetchRequest{Queues: r.Queues, WorkerID: r.WorkerID, Hostname: r.Hostname,
		Timeout: seconds(r.Timeout), LeaseDuration: seconds(r.LeaseDuration)}
	if w.WorkerID == "" {
		w.WorkerID = workerID
	}
	return w
}

// seconds is d in seconds for an optional field; zero is left out.
func seconds(d time.Duration) *float64 {
	if d == 0 {
		return nil
	}
	s := d.Seconds()
	return &s
}

// fetchSlack is added to the long-poll timeout to bound a fetch whose
// context has no deadline.
const fetchSlack = 30 * time.Second

// defaultFetchWait bounds a fetch with no Timeout of its own: the longest
// the server waits.
const defaultFetchWait = wire.MaxFetchTimeout

// Job is a job delivered to a worker by Fetch.
type Job struct {
	ID         string
	Queue      string
	Payload    json.RawMessage
	Attempt    int
	MaxRetries int
	// LeaseDuration is how long the lease lasts without a heartbeat.
	LeaseDuration time.Duration
	// Checkpoint is what an earlier attempt saved, or nil.
	Checkpoint json.RawMessage
	Tags       map[string]string
	// LeaseToken names this lease of the job. Pass it to Ack and Fail
	// (Lease), AckBatch (AckItem.LeaseToken) and Heartbeat
	// (HeartbeatJob.LeaseToken): the server then applies them to this
	// lease only, and refuses them (lease_mismatch, or lost) once the
	// lease ran out and the job went to another worker.
	LeaseToken string
	// TraceParent and TraceState are the job's W3C trace context, when
	// it has one.
	TraceParent string
	TraceState  string
}

// UnmarshalJSON reads a wire.FetchedJob.
func (j *Job) UnmarshalJSON(b []byte) error {
	var w wire.FetchedJob
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*j = *jobFromWire(w)
	return nil
}

func jobFromWire(w wire.FetchedJob) *Job {
	return &Job{
		ID: w.JobID, Queue: w.Queue, Payload: rawOrNil(w.Payload),
		Attempt: w.Attempt, MaxRetries: w.MaxRetries,
		LeaseDuration: time.Duration(w.LeaseDuration * float64(time.Second)),
		Checkpoint:    rawOrNil(w.Checkpoint), Tags: w.Tags, LeaseToken: w.LeaseToken,
		TraceParent: w.TraceParent, TraceState: w.TraceState,
	}
}

// bound gives ctx a deadline past the long-poll's wait when it has none.
func bound(ctx context.Context, timeout time.Duration) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return ctx, func() {}
	}
	wait := timeout
	if wait <= 0 {
		wait = defaultFetchWait
	}
	return context.WithTimeout(ctx, wait+fetchSlack)
}

// Fetch long-polls for a job. It returns nil, nil when the server had no
// job within the timeout (204); call it again. WorkerID defaults to the
// client's (WithWorkerID). A drained worker gets ErrWorkerDraining.
func (c *Client) Fetch(ctx context.Context, req FetchRequest) (*Job, error) {
	ctx, cancel := bound(ctx, req.Timeout)
	defer cancel()
	var job Job
	status, err := c.do(ctx, "POST", "/api/v1/fetch", req.toWire(c.workerID), &job)
	if err != nil || status == http.StatusNoContent {
		return nil, err
	}
	return &job, nil
}

// ReportOption qualifies an Ack or Fail.
type ReportOption func(*report)

type report struct {
	leaseToken   string
	nonRetryable bool
	usage        *AIUsage // WithUsage (ai_usage.go)
}

func reportOf(opts []ReportOption) report {
	var r report
	for _, o := range opts {
		o(&r)
	}
	return r
}

// Lease binds an Ack or Fail to the lease a fetch handed out (the Job's
// LeaseToken): the server refuses it (409 lease_mismatch) once that lease
// ran out or was given to another worker, instead of settling the other
// worker's attempt. Without it, the call settles whatever lease the job
// holds now. The worker runtime always sends it.
func Lease(token string) ReportOption {
	return func(r *report) { r.leaseToken = token }
}

// Ack completes a job; result (any JSON-encodable value, or nil) is stored
// as the job's result. With Lease, or with WithWorkerID, the server
// refuses (409 lease_mismatch) to ack a job not held under that lease or
// by this worker.
func (c *Client) Ack(ctx context.Context, jobID string, result any, opts ...ReportOption) error {
	return c.ack(ctx, jobID, result, "", opts)
}

func (c *Client) ack(ctx context.Context, jobID string, result any, stepStatus string, opts []ReportOption) error {
	raw, err := marshalRaw(result)
	if err != nil {
		return fmt.Errorf("jobbie: ack %s: encode result: %w", jobID, err)
	}
	r := reportOf(opts)
	in := wire.AckRequest{Result: raw, WorkerID: c.workerID, StepStatus: stepStatus, LeaseToken: r.leaseToken, Usage: r.usage}
	_, err = c.do(ctx, "POST", "/api/v1/ack/"+url.PathEscape(jobID), in, nil)
	return err
}

// FailResult says what the server did with a failed job: Status
// "retrying", "pending" (no backoff), "dead" (Reason says why) or
// "cancelled".
type FailResult = wire.FailResponse

// Fail reports a failed attempt; the server decides whether to retry
// (never after NonRetryable). Like Ack, it carries the client's worker id,
// and the lease it names (Lease).
func (c *Client) Fail(ctx context.Context, jobID, errMsg, backtrace string, opts ...ReportOption) (*FailResult, error) {
	r := reportOf(opts)
	in := wire.FailRequest{Error: errMsg, Backtrace: backtrace, WorkerID: c.workerID, LeaseToken: r.leaseToken, NonRetryable: r.nonRetryable, Usage: r.usage}
	var out FailResult
	if _, err := c.do(ctx, "POST", "/api/v1/fail/"+url.PathEscape(jobID), in, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Progress is a job's progress as shown in the console.
type Progress = wire.Progress

// HeartbeatJob is what a heartbeat reports for one active job: nothing
// (just extend the lease), progress, and/or a checkpoint to store. With
// LeaseToken (the Job's), only that lease is extended: the job is lost
// once it ran out and went to another worker.
type HeartbeatJob struct {
	Progress   *Progress
	Checkpoint json.RawMessage
	LeaseToken string
	Usage      *AIUsage // model usage to add to the job's (ai_usage.go)
}

// MarshalJSON writes the job's report as a wire.HeartbeatEntry.
func (h HeartbeatJob) MarshalJSON() ([]byte, error) {
	w, err := h.toWire()
	if err != nil {
		return nil, err
	}
	return json.Marshal(w)
}

// UnmarshalJSON reads a wire.HeartbeatEntry whose progress has the
// console's shape.
func (h *HeartbeatJob) UnmarshalJSON(b []byte) error {
	var w wire.HeartbeatEntry
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	progress, err := decodeOptional[Progress](w.Progress)
	*h = HeartbeatJob{Progress: progress, Checkpoint: rawOrNil(w.Checkpoint), LeaseToken: w.LeaseToken, Usage: w.Usage}
	return err
}

func (h HeartbeatJob) toWire() (wire.HeartbeatEntry, error) {
	progress, err := encodeOptional(h.Progress)
	return wire.HeartbeatEntry{Progress: progress, Checkpoint: h.Checkpoint, LeaseToken: h.LeaseToken, Usage: h.Usage}, err
}

// Heartbeat statuses.
const (
	HeartbeatOK     = wire.HeartbeatOK
	HeartbeatCancel = wire.HeartbeatCancel // the job was cancelled: stop working on it
	HeartbeatLost   = wire.HeartbeatLost   // the job is no longer active under this worker
)

// HeartbeatResult holds the server's answer per job id.
type HeartbeatResult wire.HeartbeatResponse

// HeartbeatStatus is the answer for one job.
type HeartbeatStatus = wire.StatusResponse

// Cancelled reports whether the server asked to stop job id.
func (r *HeartbeatResult) Cancelled(id string) bool {
	return r != nil && r.Jobs[id].Status == HeartbeatCancel
}

// Lost reports whether job id is no longer leased to this worker (its
// lease expired and it went to another worker, or it left the active
// state); its outcome can no longer be reported.
func (r *HeartbeatResult) Lost(id string) bool {
	return r != nil && r.Jobs[id].Status == HeartbeatLost
}

// Heartbeat extends the leases of a worker's active jobs in one call,
// carrying their progress and checkpoints, and returns cancel and lost
// signals. It carries the client's worker id.
func (c *Client) Heartbeat(ctx context.Context, jobs map[string]HeartbeatJob) (*HeartbeatResult, error) {
	in := wire.HeartbeatRequest{WorkerID: c.workerID, Jobs: make(map[string]wire.HeartbeatEntry, len(jobs))}
	for id, j := range jobs {
		var err error
		if in.Jobs[id], err = j.toWire(); err != nil {
			return nil, fmt.Errorf("jobbie: heartbeat: progress of job %s: %w", id, err)
		}
	}
	var out HeartbeatResult
	if _, err := c.do(ctx, "POST", "/api/v1/heartbeat", in, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

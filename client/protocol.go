package client

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"time"
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

type fetchWire struct {
	Queues        []string `json:"queues"`
	WorkerID      string   `json:"worker_id,omitempty"`
	Hostname      string   `json:"hostname,omitempty"`
	Timeout       float64  `json:"timeout,omitempty"`        // seconds
	LeaseDuration float64  `json:"lease_duration,omitempty"` // seconds
}

// fetchSlack is added to the long-poll timeout to bound a fetch whose
// context has no deadline.
const fetchSlack = 30 * time.Second

// defaultFetchWait bounds a fetch with no Timeout of its own.
const defaultFetchWait = 60 * time.Second

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
}

type jobWire struct {
	JobID         string            `json:"job_id"`
	Queue         string            `json:"queue"`
	Payload       json.RawMessage   `json:"payload"`
	Attempt       int               `json:"attempt"`
	MaxRetries    int               `json:"max_retries"`
	LeaseDuration wireDuration      `json:"lease_duration"`
	Checkpoint    json.RawMessage   `json:"checkpoint"`
	Tags          map[string]string `json:"tags"`
}

// UnmarshalJSON reads the fetch response shape.
func (j *Job) UnmarshalJSON(b []byte) error {
	var w jobWire
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*j = Job{
		ID: w.JobID, Queue: w.Queue, Payload: rawOrNil(w.Payload),
		Attempt: w.Attempt, MaxRetries: w.MaxRetries,
		LeaseDuration: time.Duration(w.LeaseDuration),
		Checkpoint:    rawOrNil(w.Checkpoint), Tags: w.Tags,
	}
	return nil
}

// Fetch long-polls for a job. It returns nil, nil when the server had no
// job within the timeout (204); call it again. WorkerID defaults to the
// client's (WithWorkerID).
func (c *Client) Fetch(ctx context.Context, req FetchRequest) (*Job, error) {
	wait := req.Timeout
	if wait <= 0 {
		wait = defaultFetchWait
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, wait+fetchSlack)
		defer cancel()
	}
	in := fetchWire{
		Queues: req.Queues, WorkerID: req.WorkerID, Hostname: req.Hostname,
		Timeout: req.Timeout.Seconds(), LeaseDuration: req.LeaseDuration.Seconds(),
	}
	if in.WorkerID == "" {
		in.WorkerID = c.workerID
	}
	var job Job
	status, err := c.do(ctx, "POST", "/api/v1/fetch", in, &job)
	if err != nil || status == http.StatusNoContent {
		return nil, err
	}
	return &job, nil
}

// Ack completes a job; result (any JSON-encodable value, or nil) is stored
// as the job's result. With WithWorkerID, the server refuses (409
// lease_mismatch) to ack a job that is not leased to this worker.
func (c *Client) Ack(ctx context.Context, jobID string, result any) error {
	in := struct {
		Result   any    `json:"result,omitempty"`
		WorkerID string `json:"worker_id,omitempty"`
	}{result, c.workerID}
	_, err := c.do(ctx, "POST", "/api/v1/ack/"+url.PathEscape(jobID), in, nil)
	return err
}

// FailResult says what the server did with a failed job.
type FailResult struct {
	Status            string     `json:"status"` // "retrying" or "dead"
	NextAttemptAt     *time.Time `json:"next_attempt_at,omitempty"`
	AttemptsRemaining int        `json:"attempts_remaining"`
}

// Fail reports a failed attempt; the server decides whether to retry. Like
// Ack, it carries the client's worker id.
func (c *Client) Fail(ctx context.Context, jobID, errMsg, backtrace string) (*FailResult, error) {
	in := struct {
		Error     string `json:"error"`
		Backtrace string `json:"backtrace,omitempty"`
		WorkerID  string `json:"worker_id,omitempty"`
	}{errMsg, backtrace, c.workerID}
	var out FailResult
	if _, err := c.do(ctx, "POST", "/api/v1/fail/"+url.PathEscape(jobID), in, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Progress is a job's progress as shown in the console.
type Progress struct {
	Current int64  `json:"current"`
	Total   int64  `json:"total"`
	Message string `json:"message,omitempty"`
}

// HeartbeatJob is what a heartbeat reports for one active job: nothing
// (just extend the lease), progress, and/or a checkpoint to store.
type HeartbeatJob struct {
	Progress   *Progress       `json:"progress,omitempty"`
	Checkpoint json.RawMessage `json:"checkpoint,omitempty"`
}

// Heartbeat statuses.
const (
	HeartbeatOK     = "ok"
	HeartbeatCancel = "cancel" // the job was cancelled: stop working on it
	HeartbeatLost   = "lost"   // the job is no longer active under this worker
)

// HeartbeatResult holds the server's answer per job id.
type HeartbeatResult struct {
	Jobs map[string]HeartbeatStatus `json:"jobs"`
}

// HeartbeatStatus is the answer for one job.
type HeartbeatStatus struct {
	Status string `json:"status"`
}

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
	in := struct {
		WorkerID string                  `json:"worker_id,omitempty"`
		Jobs     map[string]HeartbeatJob `json:"jobs"`
	}{c.workerID, jobs}
	var out HeartbeatResult
	if _, err := c.do(ctx, "POST", "/api/v1/heartbeat", in, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

package shard

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/shard/job"
	"github.com/jobbie/jobbie/shard/keys"
	"github.com/jobbie/jobbie/tenancy"
)

// Lease lengths a worker may ask for.
const (
	DefaultLease = 60 * time.Second
	MinLease     = time.Second
	MaxLease     = 12 * time.Hour
	maxWorkerID  = 256
	maxFetchQs   = 64
	maxHeartbeat = 1000
)

// Enqueue validates and inserts jobs atomically: all of them or none.
func (e *Engine) Enqueue(ctx context.Context, ns string, reqs []EnqueueRequest, batch bool) ([]enqueueResult, error) {
	return e.enqueue(ctx, ns, reqs, batch, nil)
}

// enqueue proposes the jobs, as one batch with a callback when b is set.
func (e *Engine) enqueue(ctx context.Context, ns string, reqs []EnqueueRequest, batch bool, b *batchRecord) ([]enqueueResult, error) {
	if err := namespaceOK(ns); err != nil {
		return nil, err
	}
	if len(reqs) == 0 {
		return nil, apierr.Field("jobs", "jobs must hold at least one job")
	}
	if len(reqs) > MaxBatchJobs {
		return nil, apierr.Field("jobs", "a batch holds at most %d jobs; got %d", MaxBatchJobs, len(reqs))
	}
	c := &enqueueCmd{NS: ns, Jobs: make([][]byte, len(reqs)), Defaulted: make([]uint8, len(reqs)), Batch: b}
	for i := range reqs {
		prefix := ""
		if batch {
			prefix = fmt.Sprintf("jobs[%d].", i)
		}
		j, err := reqs[i].toJob(prefix, e.newID("job_"))
		if err != nil {
			return nil, err
		}
		if err := e.flowFields(prefix, &reqs[i], j); err != nil {
			return nil, err
		}
		if b != nil {
			j.BatchID = b.ID
		}
		c.Deps = c.Deps || len(j.DependsOn) > 0
		c.Jobs[i] = j.Encode()
		c.Defaulted[i] = defaultedFields(&reqs[i])
	}
	res, err := e.propose(ctx, cmdEnqueue, c)
	if err != nil {
		return nil, err
	}
	return res.([]enqueueResult), nil
}

// FetchRequest is a worker's long-poll for a job.
type FetchRequest struct {
	Queues        []string `json:"queues"`
	WorkerID      string   `json:"worker_id"`
	Hostname      string   `json:"hostname"`
	Timeout       *float64 `json:"timeout"`        // seconds; default 30
	LeaseDuration *float64 `json:"lease_duration"` // seconds; default 60, at least 1
}

func (r *FetchRequest) validate(maxWait time.Duration) (wait, lease time.Duration, err error) {
	if len(r.Queues) == 0 {
		return 0, 0, apierr.Field("queues", "queues must name at least one queue")
	}
	if len(r.Queues) > maxFetchQs {
		return 0, 0, apierr.Field("queues", "at most %d queues per fetch", maxFetchQs)
	}
	for _, q := range r.Queues {
		if err := tenancy.ValidateQueue(q); err != nil {
			return 0, 0, apierr.Field("queues", "%v", err)
		}
	}
	if len(r.WorkerID) > maxWorkerID || len(r.Hostname) > maxWorkerID {
		return 0, 0, apierr.Field("worker_id", "worker_id and hostname must be at most %d bytes", maxWorkerID)
	}
	wait = 30 * time.Second
	if r.Timeout != nil {
		if *r.Timeout < 0 || time.Duration(*r.Timeout*float64(time.Second)) > maxWait {
			return 0, 0, apierr.Field("timeout", "timeout must be between 0 and %d seconds", int(maxWait/time.Second))
		}
		wait = time.Duration(*r.Timeout * float64(time.Second))
	}
	lease = DefaultLease
	if r.LeaseDuration != nil {
		lease = time.Duration(*r.LeaseDuration * float64(time.Second))
		if lease < MinLease || lease > MaxLease {
			return 0, 0, apierr.Field("lease_duration", "lease_duration must be between %d and %d seconds", int(MinLease/time.Second), int(MaxLease/time.Second))
		}
	}
	return wait, lease, nil
}

// Fetch leases the next job of the queues to the worker, waiting up to the
// request's timeout for one to arrive. It returns nil when none came.
func (e *Engine) Fetch(ctx context.Context, ns string, r *FetchRequest) (*job.Job, error) {
	if err := namespaceOK(ns); err != nil {
		return nil, err
	}
	wait, lease, err := r.validate(e.cfg.MaxFetchTimeout)
	if err != nil {
		return nil, err
	}
	c := &fetchCmd{NS: ns, Queues: r.Queues, WorkerID: r.WorkerID, Hostname: r.Hostname, LeaseNs: int64(lease), LeaseDefault: r.LeaseDuration == nil}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for {
		// Park before looking, so an enqueue between the look and the
		// wait still wakes us.
		w := e.waiters.park(ns, r.Queues)
		if e.anyPending(ns, r.Queues) {
			res, err := e.propose(ctx, cmdFetch, c)
			if err != nil {
				e.waiters.leave(w, false)
				return nil, err
			}
			if j := res.(*job.Job); j != nil {
				e.waiters.leave(w, true)
				return j, nil
			}
		}
		select {
		case <-w.ch:
			e.waiters.leave(w, true)
		case <-timer.C:
			e.waiters.leave(w, false)
			return nil, nil
		case <-ctx.Done():
			e.waiters.leave(w, false)
			return nil, nil
		case <-e.stop:
			e.waiters.leave(w, false)
			return nil, nil
		}
	}
}

// anyPending reads local state: does any of the queues hold a pending job
// that a fetch may take now (see queueReady)?
// Only the leader serves fetches, and it has applied what it committed. A
// stale "no" is safe: the fetch parked before looking, and the apply that
// makes a job pending wakes it.
func (e *Engine) anyPending(ns string, queues []string) bool {
	for _, q := range queues {
		if e.queueReady(ns, q) {
			return true
		}
	}
	return false
}

// AckRequest completes a job.
type AckRequest struct {
	Result   json.RawMessage `json:"result"`
	WorkerID string          `json:"worker_id"`
	// StepStatus steers a chain step: "continue" (the default) or "exit"
	// (chains.go); other jobs ignore it.
	StepStatus string `json:"step_status"`
}

// Ack completes an active job with its result. It returns the state the
// job settled in: completed, or cancelled when a cancel was requested
// while it ran.
func (e *Engine) Ack(ctx context.Context, ns, id string, r *AckRequest) (job.State, error) {
	if err := namespaceOK(ns); err != nil {
		return 0, err
	}
	if err := jobIDOK(id); err != nil {
		return 0, err
	}
	res, err := checkJSON("result", r.Result, MaxPayloadBytes)
	if err != nil {
		return 0, err
	}
	if err := stepStatusOK("step_status", r.StepStatus); err != nil {
		return 0, err
	}
	out, err := e.propose(ctx, cmdAck, &ackCmd{NS: ns, ID: id, WorkerID: r.WorkerID, Result: res, Step: r.StepStatus})
	if err != nil {
		return 0, err
	}
	if st, ok := out.(job.State); ok {
		return st, nil
	}
	return job.Completed, nil
}

// FailRequest reports a failed attempt.
type FailRequest struct {
	Error     string `json:"error"`
	Backtrace string `json:"backtrace"`
	WorkerID  string `json:"worker_id"`
}

// Fail records a failed attempt; the job retries after its backoff or dies.
func (e *Engine) Fail(ctx context.Context, ns, id string, r *FailRequest) (*failOutcome, error) {
	if err := namespaceOK(ns); err != nil {
		return nil, err
	}
	if err := jobIDOK(id); err != nil {
		return nil, err
	}
	if len(r.Error)+len(r.Backtrace) > MaxErrorBytes {
		return nil, &apierr.Error{Code: apierr.TooLarge, Field: "backtrace", Message: fmt.Sprintf("error and backtrace together must be at most %d bytes", MaxErrorBytes)}
	}
	res, err := e.propose(ctx, cmdFail, &failCmd{NS: ns, ID: id, WorkerID: r.WorkerID, Error: r.Error, Backtrace: r.Backtrace})
	if err != nil {
		return nil, err
	}
	return res.(*failOutcome), nil
}

// HeartbeatRequest extends leases of many jobs at once.
type HeartbeatRequest struct {
	WorkerID string                    `json:"worker_id"`
	Jobs     map[string]HeartbeatEntry `json:"jobs"`
}

// HeartbeatEntry carries optional progress and checkpoint for one job.
type HeartbeatEntry struct {
	Progress   json.RawMessage `json:"progress"`
	Checkpoint json.RawMessage `json:"checkpoint"`
}

// Heartbeat extends leases and stores progress and checkpoints; it returns
// each job's status ("ok"; "cancel" when the job was cancelled while it
// ran; "lost" when the job is no longer active under this worker).
func (e *Engine) Heartbeat(ctx context.Context, ns string, r *HeartbeatRequest) (map[string]string, error) {
	if err := namespaceOK(ns); err != nil {
		return nil, err
	}
	if len(r.Jobs) == 0 {
		return nil, apierr.Field("jobs", "jobs must name at least one job")
	}
	if len(r.Jobs) > maxHeartbeat {
		return nil, apierr.Field("jobs", "at most %d jobs per heartbeat", maxHeartbeat)
	}
	c := &heartbeatCmd{NS: ns, WorkerID: r.WorkerID}
	for id, ent := range r.Jobs {
		if err := jobIDOK(id); err != nil {
			return nil, err
		}
		p, err := checkJSON("progress", ent.Progress, maxProgress)
		if err != nil {
			return nil, err
		}
		cp, err := checkJSON("checkpoint", ent.Checkpoint, maxCheckpoint)
		if err != nil {
			return nil, err
		}
		c.Jobs = append(c.Jobs, heartbeatItem{ID: id, Progress: p, Checkpoint: cp})
	}
	res, err := e.propose(ctx, cmdHeartbeat, c)
	if err != nil {
		return nil, err
	}
	statuses := res.([]string)
	out := make(map[string]string, len(statuses))
	for i, it := range c.Jobs {
		out[it.ID] = statuses[i]
	}
	return out, nil
}

// GetJob reads a job from local state.
func (e *Engine) GetJob(ns, id string) (*job.Job, error) {
	if err := namespaceOK(ns); err != nil {
		return nil, err
	}
	if err := jobIDOK(id); err != nil {
		return nil, apierr.New(apierr.NotFound, "job %s not found", id)
	}
	return readJob(e.node.DB(), ns, id)
}

func jobIDOK(id string) error {
	if len(id) != keys.JobIDLen || id[:4] != "job_" {
		return apierr.New(apierr.NotFound, "job %q not found", id)
	}
	return nil
}

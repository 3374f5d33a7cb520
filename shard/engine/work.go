package engine

import (
	"bytes"
	"encoding/json"
	"time"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/shard/job"
	"github.com/jobbie/jobbie/wire"
)

// AckCmd completes an active job with its result.
type AckCmd struct {
	NS       string          `codec:"ns"`
	ID       string          `codec:"id"`
	WorkerID string          `codec:"w"`
	Result   json.RawMessage `codec:"r"`
	Step     string          `codec:"st,omitempty"` // step_status of a chain step
	Lease    job.LeaseID     `codec:"lt,omitempty"` // the lease it settles; zero: any
	Usage    *AIUsage        `codec:"ai,omitempty"` // model usage to add (aiusage.go; AckUsage)
}

// FailCmd records a failed attempt of an active job.
type FailCmd struct {
	NS        string      `codec:"ns"`
	ID        string      `codec:"id"`
	WorkerID  string      `codec:"w"`
	Error     string      `codec:"e"`
	Backtrace string      `codec:"b"`
	Lease     job.LeaseID `codec:"lt,omitempty"` // the lease it settles; zero: any
	// NonRetryable makes the job dead at once, whatever retries remain
	// (proposed as FailNonRetryable, FailPushNonRetryable).
	NonRetryable bool     `codec:"nr,omitempty"`
	Usage        *AIUsage `codec:"ai,omitempty"` // model usage to add (aiusage.go; FailUsage)
}

// FailOutcome is what a failure led to.
type FailOutcome struct {
	State       job.State
	NextAttempt int64
	Remaining   int
	Reason      string
}

// HeartbeatCmd extends the leases of one worker's jobs.
type HeartbeatCmd struct {
	NS       string          `codec:"ns"`
	WorkerID string          `codec:"w"`
	Jobs     []HeartbeatItem `codec:"j"`
}

// HeartbeatItem is one job of a heartbeat, with what it reports.
type HeartbeatItem struct {
	ID         string          `codec:"id"`
	Progress   json.RawMessage `codec:"p"`
	Checkpoint json.RawMessage `codec:"c"`
	Lease      job.LeaseID     `codec:"lt,omitempty"` // the lease it extends; zero: any
	Usage      *AIUsage        `codec:"ai,omitempty"` // model usage to add (aiusage.go; HeartbeatUsage)
}

// activeJob loads a job that must be active, held by workerID and under
// lease l when given. A worker whose lease ran out and was given to
// another names a lease the job no longer holds, so it cannot settle the
// other worker's attempt.
func (e *Engine) activeJob(tx *replica.Tx, ns, id, workerID string, l job.LeaseID) (*job.Job, error) {
	j, err := e.getJob(tx, ns, id)
	if err != nil {
		return nil, err
	}
	if j.State != job.Active {
		return nil, apierr.New(apierr.LeaseMismatch, "job %s is %s, not active", id, j.State)
	}
	if workerID != "" && j.WorkerID != workerID {
		return nil, apierr.New(apierr.LeaseMismatch, "job %s is leased to another worker", id)
	}
	if l != (job.LeaseID{}) && !j.Holds(l) {
		return nil, apierr.New(apierr.LeaseMismatch, "job %s: the lease_token names an earlier lease (it ran out or was released, and the job was leased again)", id)
	}
	return j, nil
}

// applyAck settles an active job as completed, or as cancelled when a
// cancel was requested while it ran; it returns the state.
func (e *Engine) applyAck(tx *replica.Tx, c *AckCmd) (job.State, error) { return e.ack(tx, c, false) }

// applyAckPush is applyAck that meters a push delivery (AckPush).
func (e *Engine) applyAckPush(tx *replica.Tx, c *AckCmd) (job.State, error) {
	return e.ack(tx, c, true)
}

func (e *Engine) ack(tx *replica.Tx, c *AckCmd, push bool) (job.State, error) {
	j, err := e.activeJob(tx, c.NS, c.ID, c.WorkerID, c.Lease)
	if err != nil {
		return 0, err
	}
	if push {
		e.pushDelivered(tx, c.NS, c.WorkerID, j.Queue)
	}
	e.addAIUsage(tx, c.NS, j, c.Usage)
	j.Result = c.Result
	setChainExit(j, c.Step)
	to := job.SettleAttempt(j.CancelRequestedAt != 0, job.Completed)
	if to == job.Completed {
		j.CompletedAt = tx.Now.UnixNano()
	}
	e.moveTo(tx, c.NS, j, to)
	e.putJob(tx, c.NS, j)
	return to, nil
}

func (e *Engine) applyFail(tx *replica.Tx, c *FailCmd) (*FailOutcome, error) {
	return e.fail(tx, c, false)
}

// applyFailPush is applyFail that meters a push delivery (FailPush).
func (e *Engine) applyFailPush(tx *replica.Tx, c *FailCmd) (*FailOutcome, error) {
	return e.fail(tx, c, true)
}

func (e *Engine) fail(tx *replica.Tx, c *FailCmd, push bool) (*FailOutcome, error) {
	j, err := e.activeJob(tx, c.NS, c.ID, c.WorkerID, c.Lease)
	if err != nil {
		return nil, err
	}
	if push {
		e.pushDelivered(tx, c.NS, c.WorkerID, j.Queue)
	}
	now := tx.Now.UnixNano()
	e.addAIUsage(tx, c.NS, j, c.Usage)
	e.failAttempt(tx, c.NS, j, now, c.Error, c.Backtrace)
	if job.SettleAttempt(j.CancelRequestedAt != 0, job.Retrying) == job.Cancelled {
		e.moveTo(tx, c.NS, j, job.Cancelled)
		e.putJob(tx, c.NS, j)
		return &FailOutcome{State: job.Cancelled}, nil
	}
	var out *FailOutcome
	if c.NonRetryable && !j.Expired(now) {
		e.kill(tx, c.NS, j, job.ReasonNonRetryable)
		out = &FailOutcome{State: job.Dead, Reason: j.DeadReason}
	} else if !j.Expired(now) && e.failRejects(tx, c.NS, j) {
		e.kill(tx, c.NS, j, job.ReasonBudgetExceeded)
		out = &FailOutcome{State: job.Dead, Reason: j.DeadReason}
	} else {
		out = e.settleFailure(tx, c.NS, j, now)
	}
	e.putJob(tx, c.NS, j)
	return out, nil
}

// settleFailure decides what a failed attempt leads to: dead when expired
// or out of retries, else retrying after its backoff (pending at once when
// the delay is zero).
func (e *Engine) settleFailure(tx *replica.Tx, ns string, j *job.Job, now int64) *FailOutcome {
	switch {
	case j.Expired(now):
		e.kill(tx, ns, j, job.ReasonExpired)
		return &FailOutcome{State: job.Dead, Reason: j.DeadReason}
	case !j.CanRetry():
		e.kill(tx, ns, j, job.ReasonRetriesExhausted)
		return &FailOutcome{State: job.Dead, Reason: j.DeadReason}
	}
	delay := job.RetryDelay(j.Backoff, time.Duration(j.BaseDelay), time.Duration(j.MaxDelay), j.Attempt, j.ID)
	j.NextAttempt = now + int64(delay)
	if delay <= 0 {
		j.NextAttempt = now
		e.moveTo(tx, ns, j, job.Pending)
		e.wake(tx, ns, j.Queue, 1)
	} else {
		e.moveTo(tx, ns, j, job.Retrying)
	}
	return &FailOutcome{State: j.State, NextAttempt: j.NextAttempt, Remaining: j.AttemptsRemaining()}
}

// applyHeartbeat extends each job's lease by its lease length and stores
// progress and checkpoint; the reply tells the worker to go on or stop.
func (e *Engine) applyHeartbeat(tx *replica.Tx, c *HeartbeatCmd) ([]string, error) {
	now := tx.Now.UnixNano()
	out := make([]string, len(c.Jobs))
	for i, it := range c.Jobs {
		j, err := e.getJob(tx, c.NS, it.ID)
		if err != nil || j.State != job.Active || (c.WorkerID != "" && j.WorkerID != c.WorkerID) ||
			(it.Lease != (job.LeaseID{}) && !j.Holds(it.Lease)) {
			out[i] = wire.HeartbeatLost
			continue
		}
		if len(it.Progress) > 0 && !bytes.Equal(it.Progress, []byte("null")) {
			j.Progress = it.Progress
			j.Record(now, job.EvProgress, string(it.Progress))
		}
		if len(it.Checkpoint) > 0 && !bytes.Equal(it.Checkpoint, []byte("null")) {
			j.Checkpoint = it.Checkpoint
		}
		e.addAIUsage(tx, c.NS, j, it.Usage)
		e.extendLease(tx, c.NS, j, now+j.LeaseNs)
		e.putJob(tx, c.NS, j)
		out[i] = wire.HeartbeatOK
		if j.CancelRequestedAt != 0 {
			out[i] = wire.HeartbeatCancel
		}
	}
	return out, nil
}

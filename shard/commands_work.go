package shard

import (
	"bytes"
	"encoding/json"
	"time"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/shard/job"
)

type ackCmd struct {
	NS       string          `codec:"ns"`
	ID       string          `codec:"id"`
	WorkerID string          `codec:"w"`
	Result   json.RawMessage `codec:"r"`
	Step     string          `codec:"st,omitempty"` // step_status of a chain step
}

type failCmd struct {
	NS        string `codec:"ns"`
	ID        string `codec:"id"`
	WorkerID  string `codec:"w"`
	Error     string `codec:"e"`
	Backtrace string `codec:"b"`
}

// failOutcome is what a failure led to.
type failOutcome struct {
	State       job.State
	NextAttempt int64
	Remaining   int
	Reason      string
}

type heartbeatCmd struct {
	NS       string          `codec:"ns"`
	WorkerID string          `codec:"w"`
	Jobs     []heartbeatItem `codec:"j"`
}

type heartbeatItem struct {
	ID         string          `codec:"id"`
	Progress   json.RawMessage `codec:"p"`
	Checkpoint json.RawMessage `codec:"c"`
}

// Heartbeat statuses per job.
const (
	hbOK     = "ok"
	hbLost   = "lost"   // not active under this worker any more: stop working on it
	hbCancel = "cancel" // cancelled while it ran: stop; ack or fail settles it as cancelled
)

func (e *Engine) registerWork(r *replica.Registry) {
	r.Register(cmdAck, "ack", typed(e.applyAck))
	r.Register(cmdFail, "fail", typed(e.applyFail))
	r.Register(cmdHeartbeat, "heartbeat", typed(e.applyHeartbeat))
}

// activeJob loads a job that must be active, held by workerID when given.
func (e *Engine) activeJob(tx *replica.Tx, ns, id, workerID string) (*job.Job, error) {
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
	return j, nil
}

func (e *Engine) applyAck(tx *replica.Tx, c *ackCmd) any {
	j, err := e.activeJob(tx, c.NS, c.ID, c.WorkerID)
	if err != nil {
		return err
	}
	j.Result = c.Result
	setChainExit(j, c.Step)
	to := job.SettleAttempt(j.CancelRequestedAt != 0, job.Completed)
	if to == job.Completed {
		j.CompletedAt = tx.Now.UnixNano()
	}
	e.moveTo(tx, c.NS, j, to)
	e.putJob(tx, c.NS, j)
	if to == job.Cancelled {
		return job.Cancelled
	}
	return nil
}

func (e *Engine) applyFail(tx *replica.Tx, c *failCmd) any {
	j, err := e.activeJob(tx, c.NS, c.ID, c.WorkerID)
	if err != nil {
		return err
	}
	now := tx.Now.UnixNano()
	j.FailedAt = now
	j.Errors = append(j.Errors, job.AttemptError{Attempt: j.Attempt, Error: c.Error, Backtrace: c.Backtrace, At: now})
	if job.SettleAttempt(j.CancelRequestedAt != 0, job.Retrying) == job.Cancelled {
		e.moveTo(tx, c.NS, j, job.Cancelled)
		e.putJob(tx, c.NS, j)
		return &failOutcome{State: job.Cancelled}
	}
	out := e.settleFailure(tx, c.NS, j, now)
	e.putJob(tx, c.NS, j)
	return out
}

// settleFailure decides what a failed attempt leads to: dead when expired
// or out of retries, else retrying after its backoff (pending at once when
// the delay is zero).
func (e *Engine) settleFailure(tx *replica.Tx, ns string, j *job.Job, now int64) *failOutcome {
	switch {
	case j.Expired(now):
		j.DeadReason = job.ReasonExpired
		e.moveTo(tx, ns, j, job.Dead)
		return &failOutcome{State: job.Dead, Reason: j.DeadReason}
	case !j.CanRetry():
		j.DeadReason = job.ReasonRetriesExhausted
		e.moveTo(tx, ns, j, job.Dead)
		return &failOutcome{State: job.Dead, Reason: j.DeadReason}
	}
	delay := job.RetryDelay(j.Backoff, time.Duration(j.BaseDelay), time.Duration(j.MaxDelay), j.Attempt, j.ID)
	j.NextAttempt = now + int64(delay)
	if delay <= 0 {
		j.NextAttempt = now
		e.moveTo(tx, ns, j, job.Pending)
		q, n := j.Queue, ns
		tx.AfterCommit(func() { e.waiters.notify(n, q, 1) })
	} else {
		e.moveTo(tx, ns, j, job.Retrying)
	}
	return &failOutcome{State: j.State, NextAttempt: j.NextAttempt, Remaining: j.AttemptsRemaining()}
}

// applyHeartbeat extends each job's lease by its lease length and stores
// progress and checkpoint; the reply tells the worker to go on or stop.
func (e *Engine) applyHeartbeat(tx *replica.Tx, c *heartbeatCmd) any {
	now := tx.Now.UnixNano()
	out := make([]string, len(c.Jobs))
	for i, it := range c.Jobs {
		j, err := e.getJob(tx, c.NS, it.ID)
		if err != nil || j.State != job.Active || (c.WorkerID != "" && j.WorkerID != c.WorkerID) {
			out[i] = hbLost
			continue
		}
		if len(it.Progress) > 0 && !bytes.Equal(it.Progress, []byte("null")) {
			j.Progress = it.Progress
			j.Record(now, job.EvProgress, string(it.Progress))
		}
		if len(it.Checkpoint) > 0 && !bytes.Equal(it.Checkpoint, []byte("null")) {
			j.Checkpoint = it.Checkpoint
		}
		e.extendLease(tx, c.NS, j, now+j.LeaseNs)
		e.putJob(tx, c.NS, j)
		out[i] = hbOK
		if j.CancelRequestedAt != 0 {
			out[i] = hbCancel
		}
	}
	return out
}

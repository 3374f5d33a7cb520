package engine

import (
	"errors"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/shard/job"
	"github.com/jobbie/jobbie/wire"
)

// Job management: manual retry, cancel, move and delete. What each
// operation may do from a job's state is decided in shard/job
// (DecideCancel, DecideManualRetry, DecideMove, DecideDelete); the
// handlers apply the decision through the store helpers.

// JobOpCmd names one job of a namespace; Queue is the target of a move.
type JobOpCmd struct {
	NS    string `codec:"ns"`
	ID    string `codec:"id"`
	Queue string `codec:"q,omitempty"`
}

// withJob makes a one-job operation a command handler: it loads the job
// the command names (bulk commands load it themselves and call the
// operation directly).
func withJob[R any](e *Engine, op func(tx *replica.Tx, c *JobOpCmd, j *job.Job) (R, error)) func(*replica.Tx, *JobOpCmd) (R, error) {
	return func(tx *replica.Tx, c *JobOpCmd) (R, error) {
		j, err := e.getJob(tx, c.NS, c.ID)
		if err != nil {
			var zero R
			return zero, err
		}
		return op(tx, c, j)
	}
}

// conflict turns a refused decision into the API's 409.
func conflict(id string, err error) error {
	var ce *job.ConflictError
	if errors.As(err, &ce) {
		return apierr.New(apierr.Conflict, "job %s is %s: cannot %s it", id, ce.State, ce.Op)
	}
	return err
}

// retryJob puts a completed, dead or cancelled job back to pending
// with its attempts reset. Its errors, checkpoint and timeline are kept;
// a TTL starts again from now.
func (e *Engine) retryJob(tx *replica.Tx, c *JobOpCmd, j *job.Job) (job.State, error) {
	to, err := job.DecideManualRetry(j.State)
	if err != nil {
		return 0, conflict(c.ID, err)
	}
	j.Attempt = 0
	j.Result, j.Progress = nil, nil
	e.requeueAs(tx, c.NS, j, to)
	return j.State, nil
}

// cancelJob cancels a waiting job at once, and marks an active one
// cancelling: its worker learns it from its waiting fetch/batch (the
// Cancelling observers) or its next heartbeat, and its ack, fail or lease
// expiry settles it as cancelled.
func (e *Engine) cancelJob(tx *replica.Tx, c *JobOpCmd, j *job.Job) (string, error) {
	d, err := job.DecideCancel(j.State)
	if err != nil {
		return "", conflict(c.ID, err)
	}
	if d == job.CancelRequested {
		if j.CancelRequestedAt == 0 {
			j.CancelRequestedAt = tx.Now.UnixNano()
			j.Record(j.CancelRequestedAt, job.EvCancelRequested, "worker "+j.WorkerID)
			e.putJob(tx, c.NS, j)
			for _, o := range e.cancels {
				o(tx, c.NS, j)
			}
		}
		return wire.CancelRequested, nil
	}
	e.moveTo(tx, c.NS, j, job.Cancelled)
	e.putJob(tx, c.NS, j)
	return wire.CancelDone, nil
}

// moveJob moves a job that is not active to another queue, in the
// same state.
func (e *Engine) moveJob(tx *replica.Tx, c *JobOpCmd, j *job.Job) (job.State, error) {
	if err := job.DecideMove(j.State); err != nil {
		return 0, conflict(c.ID, err)
	}
	if j.Queue == c.Queue {
		return 0, apierr.Field("queue", "job %s is already in queue %s", c.ID, c.Queue)
	}
	from := j.Queue
	e.changeQueue(tx, c.NS, j, c.Queue)
	j.Record(tx.Now.UnixNano(), job.EvMoved, from+" → "+j.Queue)
	e.putJob(tx, c.NS, j)
	if j.State == job.Pending {
		e.wake(tx, c.NS, j.Queue, 1)
	}
	return j.State, nil
}

// discardJob deletes a job that is not active, with every index entry,
// and settles its batch and the jobs waiting on it when it was unfinished
// (discard).
func (e *Engine) discardJob(tx *replica.Tx, c *JobOpCmd, j *job.Job) (replica.None, error) {
	if err := job.DecideDelete(j.State); err != nil {
		return replica.None{}, conflict(c.ID, err)
	}
	e.discard(tx, c.NS, j)
	return replica.None{}, nil
}

// deleteJob is the JobDelete of older logs, kept so they replay as they
// first applied: the job goes, and what waits on it is left as it was.
func (e *Engine) deleteJob(tx *replica.Tx, c *JobOpCmd, j *job.Job) (replica.None, error) {
	if err := job.DecideDelete(j.State); err != nil {
		return replica.None{}, conflict(c.ID, err)
	}
	e.removeJob(tx, c.NS, j)
	return replica.None{}, nil
}

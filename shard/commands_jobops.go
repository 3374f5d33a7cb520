package shard

import (
	"errors"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/shard/job"
	"github.com/jobbie/jobbie/shard/keys"
)

// Job management: manual retry, cancel, move and delete, and the prune
// of finished jobs past their retention. What each operation may do from
// a job's state is decided in shard/job (DecideCancel, DecideManualRetry,
// DecideMove, DecideDelete); the handlers apply the decision.

// jobOpCmd names one job of a namespace; Queue is the target of a move.
type jobOpCmd struct {
	NS    string `codec:"ns"`
	ID    string `codec:"id"`
	Queue string `codec:"q,omitempty"`
}

// Cancel outcomes, as the API reports them.
const (
	cancelDone      = "cancelled"
	cancelRequested = "cancelling"
)

func (e *Engine) registerJobOps(r *replica.Registry) {
	r.Register(cmdJobRetry, "job.retry", typed(e.withJob(e.retryJob)))
	r.Register(cmdJobCancel, "job.cancel", typed(e.withJob(e.cancelJob)))
	r.Register(cmdJobMove, "job.move", typed(e.withJob(e.moveJob)))
	r.Register(cmdJobDelete, "job.delete", typed(e.withJob(e.deleteJob)))
	r.Register(cmdJobPrune, "job.prune", typed(e.applyPrune))
	e.observers = append(e.observers, e.deadObserver, e.retentionObserver, e.timelineObserver)
}

// withJob makes a one-job operation a command handler: it loads the job
// the command names (bulk commands load it themselves and call the
// operation directly).
func (e *Engine) withJob(op func(tx *replica.Tx, c *jobOpCmd, j *job.Job) any) func(*replica.Tx, *jobOpCmd) any {
	return func(tx *replica.Tx, c *jobOpCmd) any {
		j, err := e.getJob(tx, c.NS, c.ID)
		if err != nil {
			return err
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
func (e *Engine) retryJob(tx *replica.Tx, c *jobOpCmd, j *job.Job) any {
	to, err := job.DecideManualRetry(j.State)
	if err != nil {
		return conflict(c.ID, err)
	}
	now := tx.Now.UnixNano()
	j.Attempt = 0
	j.DeadReason, j.Result, j.Progress = "", nil, nil
	j.CancelRequestedAt, j.NextAttempt, j.LeaseUntil = 0, 0, 0
	j.WorkerID, j.Hostname = "", ""
	if j.ExpireAfter > 0 {
		j.ExpireAt = now + j.ExpireAfter
		e.setTimed(tx, c.NS, keys.KindExpire, j.ExpireAt, j.ID)
	}
	e.moveTo(tx, c.NS, j, to)
	e.putJob(tx, c.NS, j)
	e.wake(tx, c.NS, j.Queue)
	return j.State
}

// cancelJob cancels a waiting job at once, and marks an active one
// cancelling: its worker learns it from its next heartbeat, and its ack,
// fail or lease expiry settles it as cancelled. It returns cancelDone or
// cancelRequested.
func (e *Engine) cancelJob(tx *replica.Tx, c *jobOpCmd, j *job.Job) any {
	d, err := job.DecideCancel(j.State)
	if err != nil {
		return conflict(c.ID, err)
	}
	if d == job.CancelRequested {
		if j.CancelRequestedAt == 0 {
			j.CancelRequestedAt = tx.Now.UnixNano()
			j.Record(j.CancelRequestedAt, job.EvCancelRequested, "worker "+j.WorkerID)
			e.putJob(tx, c.NS, j)
		}
		return cancelRequested
	}
	e.moveTo(tx, c.NS, j, job.Cancelled)
	e.putJob(tx, c.NS, j)
	return cancelDone
}

// moveJob moves a job that is not active to another queue, in the
// same state. A unique lock it held stays with the old queue's key space
// and is released.
func (e *Engine) moveJob(tx *replica.Tx, c *jobOpCmd, j *job.Job) any {
	if err := job.DecideMove(j.State); err != nil {
		return conflict(c.ID, err)
	}
	if j.Queue == c.Queue {
		return apierr.Field("queue", "job %s is already in queue %s", c.ID, c.Queue)
	}
	from := j.Queue
	e.removeIndexes(tx, c.NS, j)
	releaseUnique(tx, c.NS, j)
	if j.State == job.Dead && j.DeadAt != 0 {
		must(tx.Delete(keys.Dead(c.NS, from, j.DeadAt, j.ID), nil))
		must(tx.Set(keys.Dead(c.NS, c.Queue, j.DeadAt, j.ID), nil, nil))
	}
	e.queues.dropCount(tx, c.NS, from, j.State)
	j.Queue = c.Queue
	e.addIndexes(tx, c.NS, j)
	e.queues.count(tx, c.NS, j.Queue, 0, j.State)
	j.Record(tx.Now.UnixNano(), job.EvMoved, from+" → "+j.Queue)
	e.putJob(tx, c.NS, j)
	if j.State == job.Pending {
		e.wake(tx, c.NS, j.Queue)
	}
	return j.State
}

// deleteJob removes a job that is not active, with every index entry.
func (e *Engine) deleteJob(tx *replica.Tx, c *jobOpCmd, j *job.Job) any {
	if err := job.DecideDelete(j.State); err != nil {
		return conflict(c.ID, err)
	}
	e.removeJob(tx, c.NS, j)
	return nil
}

// removeJob deletes j's record and every key that names it.
func (e *Engine) removeJob(tx *replica.Tx, ns string, j *job.Job) {
	e.removeIndexes(tx, ns, j)
	dropSearchEntries(tx, ns, j)
	if j.ExpireAt != 0 && !j.State.Terminal() {
		must(tx.Delete(keys.Timed(ns, keys.KindExpire, j.ExpireAt, j.ID), nil))
	}
	releaseUnique(tx, ns, j)
	if j.DeadAt != 0 {
		dropDeadIndex(tx, ns, j)
	}
	if j.PruneAt != 0 {
		must(tx.Delete(keys.Timed(ns, keys.KindPrune, j.PruneAt, j.ID), nil))
	}
	e.queues.dropCount(tx, ns, j.Queue, j.State)
	e.deleteJobRecord(tx, ns, j.ID)
}

// wake tells long-polls on queue, after commit, that a job is pending.
func (e *Engine) wake(tx *replica.Tx, ns, queue string) {
	tx.AfterCommit(func() { e.waiters.notify(ns, queue, 1) })
}

// dropCount takes one job in state s out of queue's counts (the job moved
// away or was deleted).
func (c *queueCache) dropCount(tx *replica.Tx, ns, queue string, s job.State) {
	c.count(tx, ns, queue, s, s) // loads the record and schedules its write
	c.mu.Lock()
	c.recs[headKey(ns, queue)].Counts[s]--
	c.mu.Unlock()
}

package engine

import (
	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/shard/job"
)

// SweepCmd names jobs the leader found due in one of its time indexes. The
// handler re-checks each against the state and the entry's clock, so a
// stale or repeated sweep changes nothing.
type SweepCmd struct {
	NS  string   `codec:"ns"`
	IDs []string `codec:"ids"`
}

// leaseExpiredError is recorded in a job's history when its lease ran out.
const leaseExpiredError = "lease expired: the worker stopped heartbeating"

// applyPromote moves scheduled and retrying jobs whose time came to pending.
func (e *Engine) applyPromote(tx *replica.Tx, c *SweepCmd) (int, error) {
	now := tx.Now.UnixNano()
	return e.sweep(tx, c, func(j *job.Job) bool {
		switch {
		case j.State == job.Scheduled && j.ScheduledAt <= now:
		case j.State == job.Retrying && j.NextAttempt <= now:
		default:
			return false
		}
		e.moveTo(tx, c.NS, j, job.Pending)
		return true
	})
}

// applyReclaim returns jobs whose lease expired to pending, keeping their
// checkpoint and recording the lost attempt in their history. A job marked
// cancelling is cancelled instead.
func (e *Engine) applyReclaim(tx *replica.Tx, c *SweepCmd) (int, error) {
	now := tx.Now.UnixNano()
	return e.sweep(tx, c, func(j *job.Job) bool {
		if j.State != job.Active || j.LeaseUntil > now {
			return false
		}
		j.Errors = append(j.Errors, job.AttemptError{Attempt: j.Attempt, Error: leaseExpiredError, At: now})
		j.FailedAt = now
		j.WorkerID, j.Hostname = "", ""
		e.moveTo(tx, c.NS, j, job.SettleAttempt(j.CancelRequestedAt != 0, job.Pending))
		return true
	})
}

// applyExpire moves jobs past their TTL to dead with reason "expired".
func (e *Engine) applyExpire(tx *replica.Tx, c *SweepCmd) (int, error) {
	now := tx.Now.UnixNano()
	return e.sweep(tx, c, func(j *job.Job) bool {
		if j.State.Terminal() || !j.Expired(now) {
			return false
		}
		e.kill(tx, c.NS, j, job.ReasonExpired)
		return true
	})
}

// sweep applies change to each named job and wakes waiters for the queues
// that gained pending jobs. It returns how many jobs changed.
func (e *Engine) sweep(tx *replica.Tx, c *SweepCmd, change func(*job.Job) bool) (int, error) {
	woken := map[string]int{}
	n := 0
	for _, id := range c.IDs {
		j, err := e.getJob(tx, c.NS, id)
		if err != nil {
			continue // deleted since the leader looked
		}
		if !change(j) {
			continue
		}
		e.putJob(tx, c.NS, j)
		n++
		if j.State == job.Pending {
			woken[j.Queue]++
		}
	}
	for q, k := range woken {
		e.wake(tx, c.NS, q, k)
	}
	return n, nil
}

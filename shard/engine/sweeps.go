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

// leaseExpiredError is what the Reclaim command of older logs recorded
// in a job's history when its lease ran out.
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

// applyReclaimCounted settles jobs whose lease expired. The lost attempt
// is recorded (error lease_expired) and counts toward max_retries like a
// failure: with retries left the job is pending again at once, keeping
// its checkpoint; without, it is dead (reason lease_expired), so a job
// that kills its worker every time ends instead of looping. A job marked
// cancelling is cancelled.
func (e *Engine) applyReclaimCounted(tx *replica.Tx, c *SweepCmd) (int, error) {
	now := tx.Now.UnixNano()
	return e.sweep(tx, c, func(j *job.Job) bool {
		if j.State != job.Active || j.LeaseUntil > now {
			return false
		}
		e.failAttempt(tx, c.NS, j, now, job.ReasonLeaseExpired, "")
		j.WorkerID, j.Hostname = "", ""
		switch {
		case j.CancelRequestedAt != 0:
			e.moveTo(tx, c.NS, j, job.Cancelled)
		case j.Expired(now):
			e.kill(tx, c.NS, j, job.ReasonExpired)
		case !j.CanRetry():
			e.kill(tx, c.NS, j, job.ReasonLeaseExpired)
		default:
			e.moveTo(tx, c.NS, j, job.Pending)
		}
		return true
	})
}

// applyReclaim is the Reclaim command of older logs, kept so they replay
// as they first applied: the job returns to pending and the lost attempt
// is recorded but never ends it.
func (e *Engine) applyReclaim(tx *replica.Tx, c *SweepCmd) (int, error) {
	now := tx.Now.UnixNano()
	return e.sweep(tx, c, func(j *job.Job) bool {
		if j.State != job.Active || j.LeaseUntil > now {
			return false
		}
		e.failAttempt(tx, c.NS, j, now, leaseExpiredError, "")
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
	if restoring(tx, c.NS) {
		return 0, nil // proposed before a restore began: its jobs are not these
	}
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

package engine

import (
	"strconv"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/shard/job"
)

// A fetch leases its job before the answer travels. When the worker that
// asked is found gone before the answer was handed over (its connection
// closed while it long-polled), whoever held its connection releases the
// lease at once instead of letting it run out: the job goes back to
// pending ahead of its queue's later jobs, and the attempt does not count.

// ReleaseCmd gives back jobs leased to WorkerID that never reached it.
// Each job names the attempt it was leased for, so a release that comes
// late cannot undo a later lease of the same job.
type ReleaseCmd struct {
	NS       string        `codec:"ns"`
	WorkerID string        `codec:"w"`
	Jobs     []ReleaseItem `codec:"j"`
}

// ReleaseItem is one job of a release and the attempt it was leased for,
// and the lease itself when the fetch named it (a token): an attempt
// number alone repeats after a release.
type ReleaseItem struct {
	ID      string      `codec:"id"`
	Attempt int         `codec:"a"`
	Lease   job.LeaseID `codec:"lt,omitempty"`
}

// applyRelease returns, per job, whether it was released: a job no longer
// active under that worker and attempt is left alone.
func (e *Engine) applyRelease(tx *replica.Tx, c *ReleaseCmd) ([]bool, error) {
	if len(c.Jobs) == 0 {
		return nil, apierr.Field("jobs", "jobs must name at least one job")
	}
	out := make([]bool, len(c.Jobs))
	for i, it := range c.Jobs {
		j, err := e.getJob(tx, c.NS, it.ID)
		if err != nil || j.State != job.Active || j.WorkerID != c.WorkerID || j.Attempt != it.Attempt ||
			(it.Lease != (job.LeaseID{}) && !j.Holds(it.Lease)) {
			continue
		}
		detail := "attempt " + strconv.Itoa(j.Attempt) + " not counted"
		if c.WorkerID != "" {
			detail = "worker " + c.WorkerID + " went away before the job was handed over; " + detail
		}
		j.Record(tx.Now.UnixNano(), job.EvLeaseReleased, detail)
		e.unleased(tx, c.NS, j)
		job.Unlease(j)
		to := job.SettleAttempt(j.CancelRequestedAt != 0, job.Pending)
		e.moveTo(tx, c.NS, j, to)
		e.putJob(tx, c.NS, j)
		if to == job.Pending {
			e.wake(tx, c.NS, j.Queue, 1)
		}
		out[i] = true
	}
	return out, nil
}

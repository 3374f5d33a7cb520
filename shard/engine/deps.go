package engine

import (
	"github.com/cockroachdb/pebble"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/shard/job"
	"github.com/jobbie/jobbie/shard/keys"
)

// Dependencies: a job enqueued with depends_on is held until every job it
// names has completed; a dependency already completed counts at once. Each
// dependency not yet finished gets a reverse edge (keys.Dependent) and the
// flag job.FlowHasDependents, so its terminal state finds its dependents
// with one seek; the dependent counts what is left (job.Job.DepsLeft).
// When a dependency dies or is cancelled, its held dependents are
// cancelled with reason dependency_failed, or count it as done when they
// were enqueued with on_dependency_failure "run". A dependency settles its
// dependents once: its edges are deleted then, so retrying it by hand
// later changes nothing for them. A job deleted while others wait for it
// leaves them held; cancel it instead.

// checkDependencies refuses an enqueue naming a job that does not exist in
// the namespace, before anything is written.
func (e *Engine) checkDependencies(tx *replica.Tx, ns string, recs [][]byte) error {
	for _, rec := range recs {
		j := new(job.Job)
		must(j.Decode(rec))
		for _, id := range j.DependsOn {
			if _, err := e.getJob(tx, ns, id); err != nil {
				if apierr.CodeOf(err) == apierr.NotFound {
					return apierr.Field("depends_on", "depends_on: job %s not found", id)
				}
				return err
			}
		}
	}
	return nil
}

// holdForDependencies looks at a new job's dependencies before it is
// inserted. failed is true when one already failed (and the job does not
// run anyway): the job is inserted held and cancelled at once. Otherwise
// each unfinished dependency gets a reverse edge and counts in DepsLeft,
// and waiting says whether any is left.
func (e *Engine) holdForDependencies(tx *replica.Tx, ns string, j *job.Job) (waiting, failed bool) {
	deps := make([]*job.Job, 0, len(j.DependsOn))
	for _, id := range j.DependsOn {
		d, err := e.getJob(tx, ns, id)
		must(err) // checkDependencies ran
		if (d.State == job.Dead || d.State == job.Cancelled) && !j.Flow.Has(job.FlowRunOnDepFail) {
			return false, true
		}
		deps = append(deps, d)
	}
	for _, d := range deps {
		if d.State.Terminal() {
			continue // completed, or failed under the "run" policy
		}
		j.DepsLeft++
		must(tx.Set(keys.Dependent(ns, d.ID, j.ID), nil, nil))
		if !d.Flow.Has(job.FlowHasDependents) {
			d.Flow |= job.FlowHasDependents
			e.putJob(tx, ns, d)
		}
	}
	return j.DepsLeft > 0, false
}

// cancelForDependency cancels a held job because a dependency failed.
func (e *Engine) cancelForDependency(tx *replica.Tx, ns string, d *job.Job) {
	d.CancelReason = job.ReasonDependencyFailed
	e.moveTo(tx, ns, d, job.Cancelled)
}

// settleDependents tells dep's held dependents that dep reached a
// terminal state, and deletes its reverse edges.
func (e *Engine) settleDependents(tx *replica.Tx, ns string, dep *job.Job) {
	dep.Flow &^= job.FlowHasDependents
	p := keys.Dependents(ns, dep.ID)
	it, err := tx.NewIter(&pebble.IterOptions{LowerBound: p, UpperBound: keys.PrefixEnd(p)})
	must(err)
	var ids []string
	for ok := it.First(); ok; ok = it.Next() {
		ids = append(ids, keys.DependentID(it.Key()))
	}
	must(it.Close())
	failed := dep.State != job.Completed
	for _, id := range ids {
		must(tx.Delete(keys.Dependent(ns, dep.ID, id), nil))
		d, err := e.getJob(tx, ns, id)
		if err != nil || d.State != job.Held {
			continue // deleted, cancelled or already settled
		}
		switch {
		case failed && !d.Flow.Has(job.FlowRunOnDepFail):
			e.cancelForDependency(tx, ns, d)
		case d.DepsLeft > 1:
			d.DepsLeft--
		default:
			d.DepsLeft = 0
			e.release(tx, ns, d)
		}
		e.putJob(tx, ns, d)
	}
}

// release makes a held job whose dependencies are done runnable: pending,
// or scheduled while its scheduled_at is ahead.
func (e *Engine) release(tx *replica.Tx, ns string, d *job.Job) {
	now := tx.Now.UnixNano()
	d.Record(now, job.EvReleased, "dependencies done")
	if d.ScheduledAt > now {
		e.moveTo(tx, ns, d, job.Scheduled)
		return
	}
	d.ScheduledAt = 0
	e.moveTo(tx, ns, d, job.Pending)
	e.wake(tx, ns, d.Queue, 1)
}

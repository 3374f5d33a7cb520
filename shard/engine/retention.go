package engine

import (
	"time"

	"github.com/cockroachdb/pebble"

	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/shard/job"
	"github.com/jobbie/jobbie/shard/keys"
)

// Retention: completed and cancelled jobs are pruned once their retention
// period has passed (their queue's own, else their namespace's, else
// Options.Retention); dead jobs stay
// until deleted. Entering a retained state puts the job in the prune time
// index (keys.KindPrune) at its prune time; leaving it (a manual retry)
// takes it out. The leader's sweep proposes JobPrune for due entries, and
// the handler re-checks each job before deleting it.

// retentionOf is the retention period of queue's finished jobs: the
// queue's own setting, else the namespace's, else the engine's.
func (e *Engine) retentionOf(r pebble.Reader, ns, queue string) time.Duration {
	if d := e.queueRetention(r, ns, queue); d > 0 {
		return d
	}
	if d := e.namespaceConfig(r, ns).Retention; d > 0 {
		return time.Duration(d)
	}
	return e.retention
}

// retentionObserver keeps the prune index and the finish stamps in step
// with the state.
func (e *Engine) retentionObserver(tx *replica.Tx, ns string, j *job.Job, from job.State) {
	if job.Retained(from) && j.PruneAt != 0 {
		must(tx.Delete(keys.Timed(ns, keys.KindPrune, j.PruneAt, j.ID), nil))
		j.PruneAt = 0
	}
	if !job.Retained(j.State) {
		return
	}
	now := tx.Now.UnixNano()
	if j.State == job.Cancelled {
		j.CancelledAt = now
	}
	j.PruneAt = now + int64(e.retentionOf(tx, ns, j.Queue))
	e.setTimed(tx, ns, keys.KindPrune, j.PruneAt, j.ID)
}

// applyPrune deletes the named jobs that are still finished and past their
// prune time. It returns how many it deleted.
func (e *Engine) applyPrune(tx *replica.Tx, c *SweepCmd) (int, error) {
	if restoring(tx, c.NS) {
		return 0, nil // proposed before a restore began
	}
	now := tx.Now.UnixNano()
	n := 0
	for _, id := range c.IDs {
		j, err := e.getJob(tx, c.NS, id)
		if err != nil || !job.Retained(j.State) || j.PruneAt == 0 || j.PruneAt > now {
			continue
		}
		e.removeJob(tx, c.NS, j)
		n++
	}
	return n, nil
}

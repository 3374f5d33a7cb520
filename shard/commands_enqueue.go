package shard

import (
	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/shard/job"
)

// enqueueCmd inserts jobs atomically. The proposer validated them and gave
// them ids; the handler stamps times and resolves unique keys.
type enqueueCmd struct {
	NS   string   `codec:"ns"`
	Jobs [][]byte `codec:"j"` // job records (job.Job.Encode)
	// Defaulted holds, per job, the fields its producer left out, which
	// take the queue's defaults (queues_ops.go); absent in older entries.
	Defaulted []uint8 `codec:"d,omitempty"`
	// Batch is the batch the jobs form, with its callback (batches.go);
	// Deps is set when some job has depends_on (deps.go).
	Batch *batchRecord `codec:"b,omitempty"`
	Deps  bool         `codec:"dp,omitempty"`
}

// enqueueResult is one job's outcome.
type enqueueResult struct {
	JobID    string
	State    job.State
	Existing bool
}

func (e *Engine) registerEnqueue(r *replica.Registry) {
	r.Register(cmdEnqueue, "enqueue", typed(e.applyEnqueue))
	e.observers = append(e.observers, e.flowObserver)
}

func (e *Engine) applyEnqueue(tx *replica.Tx, c *enqueueCmd) any {
	now := tx.Now.UnixNano()
	if c.Deps {
		if err := e.checkDependencies(tx, c.NS, c.Jobs); err != nil {
			return err
		}
	}
	registerNamespace(tx, c.NS)
	out := make([]enqueueResult, len(c.Jobs))
	woken := map[string]int{}
	if c.Batch != nil {
		openBatch(tx, c.NS, c.Batch, len(c.Jobs))
	}
	skipped := 0
	for i, rec := range c.Jobs {
		j := new(job.Job)
		must(j.Decode(rec))
		if i < len(c.Defaulted) {
			e.applyJobDefaults(tx, c.NS, j, c.Defaulted[i])
		}
		if j.UniqueKey != "" {
			if holder, ok := heldUnique(tx, c.NS, j.Queue, j.UniqueKey, now); ok {
				if h, err := e.getJob(tx, c.NS, holder); err == nil && !h.State.Terminal() {
					out[i] = enqueueResult{JobID: h.ID, State: h.State, Existing: true}
					if j.BatchID != "" {
						skipped++
					}
					continue
				}
			}
		}
		j.CreatedAt = now
		if j.ExpireAfter > 0 {
			j.ExpireAt = now + j.ExpireAfter
		}
		if j.UniqueKey != "" && j.UniqueUntil > 0 {
			j.UniqueUntil += now // proposer put the period here
		}
		j.State = job.Pending
		if j.ScheduledAt > now {
			j.State = job.Scheduled
		} else {
			j.ScheduledAt = 0
		}
		depFailed := len(j.DependsOn) > 0 && e.holdForDependencies(tx, c.NS, j)
		e.insertJob(tx, c.NS, j)
		if j.UniqueKey != "" {
			takeUnique(tx, c.NS, j)
		}
		if depFailed {
			e.cancelForDependency(tx, c.NS, j)
			e.putJob(tx, c.NS, j)
		}
		if j.State == job.Pending {
			woken[j.Queue]++
		}
		out[i] = enqueueResult{JobID: j.ID, State: j.State}
	}
	if c.Batch != nil {
		e.closeBatchOpen(tx, c.NS, c.Batch.ID, skipped)
	}
	if len(woken) > 0 {
		tx.AfterCommit(func() {
			for q, n := range woken {
				e.waiters.notify(c.NS, q, n)
			}
		})
	}
	return out
}

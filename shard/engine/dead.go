package engine

import (
	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/shard/job"
	"github.com/jobbie/jobbie/shard/keys"
)

// The dead index lists a namespace's dead jobs in order of death, twice:
// once for the whole namespace (scope "") and once under the job's queue,
// so GET /api/v1/dead with or without ?queue= is one seek.

// deadObserver keeps the dead index in step with the state.
func (e *Engine) deadObserver(tx *replica.Tx, ns string, j *job.Job, from job.State) {
	if from == job.Dead && j.DeadAt != 0 {
		dropDeadIndex(tx, ns, j)
		j.DeadAt = 0
	}
	if j.State == job.Dead {
		j.DeadAt = tx.Now.UnixNano()
		for _, scope := range []string{"", j.Queue} {
			must(tx.Set(keys.Dead(ns, scope, j.DeadAt, j.ID), nil, nil))
		}
	}
}

func dropDeadIndex(tx *replica.Tx, ns string, j *job.Job) {
	for _, scope := range []string{"", j.Queue} {
		must(tx.Delete(keys.Dead(ns, scope, j.DeadAt, j.ID), nil))
	}
}

package shard

import (
	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/shard/job"
)

// A moveObserver is told, inside the apply, of every job that entered a
// state: from is 0 for a new job, and j.State is the new state. Features
// that react to lifecycle changes (a job's timeline, batch and chain
// completion, dependencies, events, metrics) each register one, in their
// own file, instead of editing moveTo. Observers run in registration order,
// write through tx like any handler, and must be deterministic. The caller
// writes j after observers return, so an observer may change j's fields.
type moveObserver func(tx *replica.Tx, ns string, j *job.Job, from job.State)

// observe runs the registered observers.
func (e *Engine) observe(tx *replica.Tx, ns string, j *job.Job, from job.State) {
	for _, o := range e.observers {
		o(tx, ns, j, from)
	}
}

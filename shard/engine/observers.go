package engine

import (
	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/shard/job"
)

// observe tells everything that reacts to lifecycle changes that j just
// entered its state (from is 0 for a new job). Every state change passes
// through here, from insertJob and moveTo, in this one order:
//
//  1. wakeObserver: a freed concurrency slot wakes a parked fetch;
//  2. eventObserver (the event log, eventlog.go), then the external
//     observers (stream nudges, workers, metrics), so the log holds a
//     change before the changes it triggers;
//  3. flowObserver: batches, chains and dependents react, which may move
//     other jobs (and so observe again, recursively);
//  4. the record keepers, which set fields of j that the caller then
//     writes: deadObserver (dead index, DeadAt), retentionObserver (prune
//     index, CancelledAt) and timelineObserver (the job's timeline);
//  5. usageObserver: the usage meters the change decides (usage.go), and
//     historyObserver: the queue's history (history.go).
func (e *Engine) observe(tx *replica.Tx, ns string, j *job.Job, from job.State) {
	e.wakeObserver(tx, ns, j, from)
	e.eventObserver(tx, ns, j, from)
	for _, o := range e.external {
		o(tx, ns, j, from)
	}
	e.flowObserver(tx, ns, j, from)
	e.deadObserver(tx, ns, j, from)
	e.retentionObserver(tx, ns, j, from)
	e.timelineObserver(tx, ns, j, from)
	e.usageObserver(tx, ns, j, from)
	e.historyObserver(tx, ns, j, from)
}

// wakeObserver wakes a parked fetch of a concurrency-limited queue when
// one of its jobs leaves the active state and so frees a slot: of the
// queue, or of the job's concurrency key.
func (e *Engine) wakeObserver(tx *replica.Tx, ns string, j *job.Job, from job.State) {
	if from != job.Active {
		return
	}
	q := e.queues.get(tx, ns, j.Queue)
	if (q.MaxActive == 0 && (q.KeyMax == 0 || j.ConcurrencyKey() == "")) || q.Paused {
		return
	}
	e.wake(tx, ns, j.Queue, 1)
}

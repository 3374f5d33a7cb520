package engine

import (
	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/shard/job"
)

// EnqueueCmd inserts jobs atomically. The proposer validated them and gave
// them ids; the handler stamps times and resolves unique keys.
type EnqueueCmd struct {
	NS   string   `codec:"ns"`
	Jobs [][]byte `codec:"j"` // job records (job.Job.Encode)
	// Defaulted holds, per job, the fields its producer left out (Def*
	// bits), which take the queue's defaults; absent in older entries.
	Defaulted []uint8 `codec:"d,omitempty"`
	// Batch is the batch the jobs form, with its callback (batches.go);
	// Deps is set when some job has depends_on (deps.go).
	Batch *BatchRecord `codec:"b,omitempty"`
	Deps  bool         `codec:"dp,omitempty"`
	// MaxPending is the plan's max_pending_jobs for the namespace (0 = no
	// limit): the whole request is refused if its new jobs would take the
	// namespace's unfinished jobs past it (unfinished.go).
	MaxPending int64 `codec:"mp,omitempty"`
	// Checked names every queue whose schema the proposer consulted for
	// the command's payloads (the jobs', their chains' steps', the
	// batch's callback's) with the version it checked against: the whole
	// command is refused if one changed since (schemas.go). Absent in
	// older entries, which checked none.
	Checked []SchemaCheck `codec:"sv,omitempty"`
}

// EnqueueResult is one job's outcome.
type EnqueueResult struct {
	JobID    string
	State    job.State
	Existing bool
}

func (e *Engine) applyEnqueue(tx *replica.Tx, c *EnqueueCmd) ([]EnqueueResult, error) {
	return e.enqueue(tx, c, true)
}

// enqueue inserts c's jobs; a producer's enqueue meets the namespace's AI
// budgets (budgets.go), the jobs the engine makes itself (a schedule's
// runs) do not.
func (e *Engine) enqueue(tx *replica.Tx, c *EnqueueCmd, producer bool) ([]EnqueueResult, error) {
	now := tx.Now.UnixNano()
	if err := e.checkSchemas(tx, c.NS, c.Checked); err != nil {
		return nil, err
	}
	if c.Deps {
		if err := e.checkDependencies(tx, c.NS, c.Jobs); err != nil {
			return nil, err
		}
	}
	if err := e.checkMaxPending(tx, c); err != nil {
		return nil, err
	}
	var budgets *budgetVerdict
	if producer {
		var err error
		if budgets, err = e.checkBudgets(tx, c); err != nil {
			return nil, err
		}
	}
	registerNamespace(tx, c.NS)
	out := make([]EnqueueResult, len(c.Jobs))
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
					out[i] = EnqueueResult{JobID: h.ID, State: h.State, Existing: true}
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
		if j.ScheduledAt <= now {
			j.ScheduledAt = 0
		}
		waiting, depFailed := false, false
		if len(j.DependsOn) > 0 {
			waiting, depFailed = e.holdForDependencies(tx, c.NS, j)
		}
		hold := ""
		if !waiting && !depFailed {
			hold = budgets.holdOf(e, tx, c.NS, j)
		}
		j.State = job.Initial(j.ScheduledAt, now, waiting || depFailed || hold != "")
		e.insertJob(tx, c.NS, j)
		if hold != "" {
			e.holdForBudget(tx, c.NS, j, hold)
		}
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
		out[i] = EnqueueResult{JobID: j.ID, State: j.State}
	}
	if c.Batch != nil {
		e.closeBatchOpen(tx, c.NS, c.Batch.ID, skipped)
	}
	for q, n := range woken {
		e.wake(tx, c.NS, q, n)
	}
	return out, nil
}

// Fields of an enqueue the producer left out, which take the queue's
// defaults at apply time (a bit set per job in EnqueueCmd.Defaulted).
const (
	DefMaxRetries uint8 = 1 << iota
	DefBackoff
	DefBaseDelay
	DefMaxDelay
	DefExpireAfter // set by proposers since queues have an expire_after default
)

// applyJobDefaults gives j its queue's defaults for the fields in mask.
func (e *Engine) applyJobDefaults(tx *replica.Tx, ns string, j *job.Job, mask uint8) {
	if mask == 0 {
		return
	}
	d := e.queues.get(tx, ns, j.Queue).Defaults
	if d == nil {
		return
	}
	if mask&DefMaxRetries != 0 && d.MaxRetries != nil {
		j.MaxRetries = *d.MaxRetries
	}
	if mask&DefBackoff != 0 && d.Backoff != "" {
		j.Backoff = d.Backoff
	}
	if mask&DefBaseDelay != 0 && d.BaseDelay > 0 {
		j.BaseDelay = d.BaseDelay
	}
	if mask&DefMaxDelay != 0 && d.MaxDelay > 0 {
		j.MaxDelay = d.MaxDelay
	}
	if mask&DefExpireAfter != 0 && d.ExpireAfter > 0 {
		j.ExpireAfter, j.ExpireAt = d.ExpireAfter, tx.Now.UnixNano()+d.ExpireAfter
	}
	if j.MaxDelay < j.BaseDelay {
		j.MaxDelay = j.BaseDelay
	}
}

package shard

import (
	"encoding/json"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/shard/job"
)

// Batch worker calls: one command leases or settles many jobs, so a busy
// worker pays one round trip and one log entry per batch. Each job goes
// through the same apply as its single call (applyFetch, applyAck), so
// queue gating and lifecycle rules hold per job.

// fetchBatchCmd leases up to Max jobs of the queues to one worker.
type fetchBatchCmd struct {
	Fetch fetchCmd `codec:"f"`
	Max   int      `codec:"m"`
}

// ackBatchCmd completes many jobs of one worker.
type ackBatchCmd struct {
	NS       string         `codec:"ns"`
	WorkerID string         `codec:"w"`
	Items    []ackBatchItem `codec:"i"`
}

type ackBatchItem struct {
	ID     string          `codec:"id"`
	Result json.RawMessage `codec:"r"`
	Step   string          `codec:"st,omitempty"` // step_status of a chain step
}

// ackOutcome is what one ack of a batch led to: the state the job settled
// in (completed, or cancelled when a cancel was requested while it ran),
// or why it was refused.
type ackOutcome struct {
	State job.State
	Err   *apierr.Error
}

func (e *Engine) registerBatchWork(r *replica.Registry) {
	r.Register(cmdFetchBatch, "fetch-batch", typed(e.applyFetchBatch))
	r.Register(cmdAckBatch, "ack-batch", typed(e.applyAckBatch))
}

// applyFetchBatch leases jobs one at a time, in the order single fetches
// would, until Max are leased or none may be handed out. Returns
// []*job.Job, empty when nothing was pending.
func (e *Engine) applyFetchBatch(tx *replica.Tx, c *fetchBatchCmd) any {
	out := make([]*job.Job, 0, min(c.Max, 64))
	for len(out) < c.Max {
		j, _ := e.applyFetch(tx, &c.Fetch).(*job.Job)
		if j == nil {
			break
		}
		out = append(out, j)
	}
	return out
}

// applyAckBatch acks each job as a single ack would; a refused ack is that
// job's outcome and leaves the others alone. Returns []ackOutcome in
// command order.
func (e *Engine) applyAckBatch(tx *replica.Tx, c *ackBatchCmd) any {
	out := make([]ackOutcome, len(c.Items))
	for i, it := range c.Items {
		res := e.applyAck(tx, &ackCmd{NS: c.NS, ID: it.ID, WorkerID: c.WorkerID, Result: it.Result, Step: it.Step})
		out[i] = ackOutcomeOf(res)
	}
	return out
}

// ackOutcomeOf maps applyAck's result: nil (completed), a job.State, or
// an error.
func ackOutcomeOf(res any) ackOutcome {
	switch v := res.(type) {
	case nil:
		return ackOutcome{State: job.Completed}
	case job.State:
		return ackOutcome{State: v}
	case error:
		return ackOutcome{Err: apierr.From(v)}
	}
	return ackOutcome{Err: apierr.New(apierr.Internal, "ack gave an unexpected result %T", res)}
}

package engine

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

// FetchBatchCmd leases up to Max jobs of the queues to one worker.
type FetchBatchCmd struct {
	Fetch FetchCmd `codec:"f"`
	Max   int      `codec:"m"`
}

// AckBatchCmd completes many jobs of one worker.
type AckBatchCmd struct {
	NS       string         `codec:"ns"`
	WorkerID string         `codec:"w"`
	Items    []AckBatchItem `codec:"i"`
}

type AckBatchItem struct {
	ID     string          `codec:"id"`
	Result json.RawMessage `codec:"r"`
	Step   string          `codec:"st,omitempty"` // step_status of a chain step
	Lease  job.LeaseID     `codec:"lt,omitempty"` // the lease it settles; zero: any
	Usage  *AIUsage        `codec:"ai,omitempty"` // model usage to add (aiusage.go; AckBatchUsage)
}

// AckOutcome is what one ack of a batch led to: the state the job settled
// in (completed, or cancelled when a cancel was requested while it ran),
// or why it was refused.
type AckOutcome struct {
	State job.State
	Err   *apierr.Error
}

// applyFetchBatch leases jobs one at a time, in the order single fetches
// would, until Max are leased or none may be handed out (an empty list).
func (e *Engine) applyFetchBatch(tx *replica.Tx, c *FetchBatchCmd) ([]*job.Job, error) {
	out := make([]*job.Job, 0, min(c.Max, 64))
	holds := &fetchHolds{}
	for len(out) < c.Max {
		j := e.fetchOne(tx, &c.Fetch, holds)
		if j == nil {
			break
		}
		out = append(out, j)
	}
	return out, nil
}

// applyAckBatch acks each job as a single ack would; a refused ack is that
// job's outcome and leaves the others alone (a refused ack writes
// nothing). Outcomes are in command order.
func (e *Engine) applyAckBatch(tx *replica.Tx, c *AckBatchCmd) ([]AckOutcome, error) {
	return e.ackBatch(tx, c, false)
}

// applyAckBatchPush is applyAckBatch that meters each ack as a push
// delivery (AckBatchPush): the dispatcher groups its acks.
func (e *Engine) applyAckBatchPush(tx *replica.Tx, c *AckBatchCmd) ([]AckOutcome, error) {
	return e.ackBatch(tx, c, true)
}

func (e *Engine) ackBatch(tx *replica.Tx, c *AckBatchCmd, push bool) ([]AckOutcome, error) {
	out := make([]AckOutcome, len(c.Items))
	for i, it := range c.Items {
		st, err := e.ack(tx, &AckCmd{NS: c.NS, ID: it.ID, WorkerID: c.WorkerID, Result: it.Result, Step: it.Step, Lease: it.Lease, Usage: it.Usage}, push)
		if err != nil {
			out[i].Err = apierr.From(err)
			continue
		}
		out[i].State = st
	}
	return out, nil
}

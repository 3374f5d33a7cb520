package shard

import (
	"bytes"
	"errors"
	"slices"

	"github.com/cockroachdb/pebble"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/shard/job"
	"github.com/jobbie/jobbie/shard/keys"
)

// Bulk operations in the state machine: one command applies an action to
// a chunk of jobs, each job through the same decision as its one-job
// operation. A background operation keeps a record whose cursor moves in
// the same command as the chunk it covers, so a step is applied once even
// when a new leader proposes it again.

// bulkCmd applies Action to the jobs IDs of NS.
type bulkCmd struct {
	NS       string   `codec:"ns"`
	Action   string   `codec:"a"`
	IDs      []string `codec:"i"`
	Queue    string   `codec:"q,omitempty"` // move's target
	Priority uint8    `codec:"p,omitempty"` // change_priority's target
	States   []uint8  `codec:"s,omitempty"` // the filter's states: a job that left them is skipped
	Op       string   `codec:"o,omitempty"` // the background operation this step belongs to
	From     []byte   `codec:"f,omitempty"` // the operation's cursor this step starts at
	Next     []byte   `codec:"n,omitempty"` // its cursor after this step
	Done     bool     `codec:"d,omitempty"` // the last step
}

// BulkOutcome counts what a bulk command did.
type BulkOutcome struct {
	Affected int64         `json:"affected"`
	Skipped  int64         `json:"skipped"`
	Errors   int64         `json:"errors"`
	Failures []BulkFailure `json:"failures,omitempty"`
	stale    bool          // a step of an operation that already moved past it
}

// BulkFailure names a job the action failed on.
type BulkFailure struct {
	JobID string `json:"job_id"`
	Error string `json:"error"`
}

// maxBulkFailures bounds the failures one answer lists.
const maxBulkFailures = 100

func (o *BulkOutcome) add(p *BulkOutcome) {
	o.Affected += p.Affected
	o.Skipped += p.Skipped
	o.Errors += p.Errors
	for _, f := range p.Failures {
		if len(o.Failures) < maxBulkFailures {
			o.Failures = append(o.Failures, f)
		}
	}
}

// Background operation states.
const (
	bulkProcessing = "processing"
	bulkCompleted  = "completed"
	bulkCancelled  = "cancelled"
)

// bulkOp is the record of a background bulk operation.
type bulkOp struct {
	ID         string `codec:"id"`
	Action     string `codec:"a"`
	Queue      string `codec:"q,omitempty"`
	Priority   uint8  `codec:"p,omitempty"`
	Filter     []byte `codec:"f"` // the filter as the caller sent it (JSON)
	Status     string `codec:"s"`
	Total      int64  `codec:"t"` // estimated at the start
	Processed  int64  `codec:"np"`
	Affected   int64  `codec:"na"`
	Skipped    int64  `codec:"ns"`
	Errors     int64  `codec:"ne"`
	Cursor     []byte `codec:"c,omitempty"` // created (8 bytes) and id of the last job scanned
	CreatedAt  int64  `codec:"ca"`
	FinishedAt int64  `codec:"fa,omitempty"`
}

type bulkOpCmd struct {
	NS string  `codec:"ns"`
	Op *bulkOp `codec:"op,omitempty"` // create
	ID string  `codec:"id,omitempty"` // cancel
}

func (e *Engine) registerBulk(r *replica.Registry) {
	r.Register(cmdBulkApply, "bulk.apply", typed(e.applyBulk))
	r.Register(cmdBulkCreate, "bulk.create", typed(e.applyBulkCreate))
	r.Register(cmdBulkCancel, "bulk.cancel", typed(e.applyBulkCancel))
}

func readBulkOp(r pebble.Reader, ns, id string) (*bulkOp, error) {
	v, closer, err := r.Get(keys.BulkOp(ns, id))
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, apierr.New(apierr.NotFound, "bulk operation %s not found", id)
	}
	if err != nil {
		return nil, err
	}
	defer closer.Close()
	op := new(bulkOp)
	if err := decode(v, op); err != nil {
		return nil, err
	}
	return op, nil
}

func (e *Engine) applyBulk(tx *replica.Tx, c *bulkCmd) any {
	var op *bulkOp
	if c.Op != "" {
		var err error
		if op, err = readBulkOp(tx, c.NS, c.Op); err != nil {
			return err
		}
		if op.Status != bulkProcessing || !bytes.Equal(op.Cursor, c.From) {
			return &BulkOutcome{stale: true}
		}
	}
	out := &BulkOutcome{}
	for _, id := range c.IDs {
		e.bulkOne(tx, c, id, out)
	}
	if op != nil {
		op.Processed += int64(len(c.IDs))
		op.Affected += out.Affected
		op.Skipped += out.Skipped
		op.Errors += out.Errors
		op.Cursor = c.Next
		if c.Done {
			op.Status, op.FinishedAt = bulkCompleted, tx.Now.UnixNano()
		}
		must(tx.Set(keys.BulkOp(c.NS, op.ID), encode(op), nil))
	}
	return out
}

// bulkOne applies the action to one job and counts the outcome.
func (e *Engine) bulkOne(tx *replica.Tx, c *bulkCmd, id string, out *BulkOutcome) {
	fail := func(msg string) {
		out.Errors++
		if len(out.Failures) < maxBulkFailures {
			out.Failures = append(out.Failures, BulkFailure{JobID: id, Error: msg})
		}
	}
	j, err := e.getJob(tx, c.NS, id)
	if err != nil {
		fail(apierr.From(err).Message)
		return
	}
	if len(c.States) > 0 && !slices.Contains(c.States, uint8(j.State)) || !job.BulkApplies(c.Action, j.State) {
		out.Skipped++
		return
	}
	op := &jobOpCmd{NS: c.NS, ID: id, Queue: c.Queue}
	var res any
	switch c.Action {
	case job.BulkRetry:
		res = e.retryJob(tx, op, j)
	case job.BulkDelete:
		res = e.deleteJob(tx, op, j)
	case job.BulkCancel:
		res = e.cancelJob(tx, op, j)
	case job.BulkMove:
		res = e.moveJob(tx, op, j)
	case job.BulkRequeue:
		res = e.requeue(tx, c.NS, j)
	case job.BulkChangePriority:
		res = e.changePriority(tx, c.NS, j, job.Priority(c.Priority))
	}
	err, _ = res.(error)
	switch {
	case err == nil:
		out.Affected++
	case apierr.CodeOf(err) == apierr.Conflict || apierr.CodeOf(err) == apierr.BadRequest:
		out.Skipped++ // refused for its state, or already as asked
	default:
		fail(apierr.From(err).Message)
	}
}

// requeue puts a dead job back to pending in its queue, keeping its
// attempts and errors (retry resets the attempts).
func (e *Engine) requeue(tx *replica.Tx, ns string, j *job.Job) any {
	now := tx.Now.UnixNano()
	j.DeadReason, j.NextAttempt, j.LeaseUntil = "", 0, 0
	j.WorkerID, j.Hostname = "", ""
	if j.ExpireAfter > 0 {
		j.ExpireAt = now + j.ExpireAfter
		e.setTimed(tx, ns, keys.KindExpire, j.ExpireAt, j.ID)
	}
	e.moveTo(tx, ns, j, job.Pending)
	e.putJob(tx, ns, j)
	e.wake(tx, ns, j.Queue)
	return nil
}

// changePriority gives a waiting job another priority; a pending job moves
// in its queue's fetch order.
func (e *Engine) changePriority(tx *replica.Tx, ns string, j *job.Job, p job.Priority) any {
	if j.Priority == p {
		return apierr.Field("priority", "job %s already has priority %s", j.ID, p)
	}
	if j.State == job.Pending {
		e.removeIndexes(tx, ns, j)
		j.Priority = p
		e.addIndexes(tx, ns, j)
	} else {
		j.Priority = p
	}
	e.putJob(tx, ns, j)
	return nil
}

func (e *Engine) applyBulkCreate(tx *replica.Tx, c *bulkOpCmd) any {
	if _, err := readBulkOp(tx, c.NS, c.Op.ID); err == nil {
		return apierr.New(apierr.Conflict, "bulk operation %s exists", c.Op.ID)
	}
	op := *c.Op
	op.Status, op.CreatedAt = bulkProcessing, tx.Now.UnixNano()
	registerNamespace(tx, c.NS)
	must(tx.Set(keys.BulkOp(c.NS, op.ID), encode(&op), nil))
	return &op
}

func (e *Engine) applyBulkCancel(tx *replica.Tx, c *bulkOpCmd) any {
	op, err := readBulkOp(tx, c.NS, c.ID)
	if err != nil {
		return err
	}
	if op.Status == bulkProcessing {
		op.Status, op.FinishedAt = bulkCancelled, tx.Now.UnixNano()
		must(tx.Set(keys.BulkOp(c.NS, op.ID), encode(op), nil))
	}
	return op
}

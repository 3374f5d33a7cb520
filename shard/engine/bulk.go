package engine

import (
	"bytes"
	"slices"

	"github.com/cockroachdb/pebble"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/shard/job"
	"github.com/jobbie/jobbie/shard/keys"
	"github.com/jobbie/jobbie/wire"
)

// Bulk operations in the state machine: one command applies an action to
// a chunk of jobs, each job through the same decision as its one-job
// operation. A background operation keeps a record whose cursor moves in
// the same command as the chunk it covers, so a step is applied once even
// when a new leader proposes it again.

// BulkCmd applies Action to the jobs IDs of NS.
type BulkCmd struct {
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
	Affected int64
	Skipped  int64
	Errors   int64
	Failures []wire.BulkFailure // the first maxBulkFailures
	Stale    bool               // a step of an operation that already moved past it: nothing done
}

// maxBulkFailures bounds the failures one answer lists.
const maxBulkFailures = 100

// Add counts p's outcome into o.
func (o *BulkOutcome) Add(p *BulkOutcome) {
	o.Affected += p.Affected
	o.Skipped += p.Skipped
	o.Errors += p.Errors
	for _, f := range p.Failures {
		if len(o.Failures) < maxBulkFailures {
			o.Failures = append(o.Failures, f)
		}
	}
}

// BulkOp is the record of a background bulk operation.
type BulkOp struct {
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
	// Prunable: the record is pruned after the retention period once
	// finished (records.go). Operations of older logs lack it and stay.
	Prunable bool `codec:"pr,omitempty"`
	// Scoped: the operation was started under a queue scope and acts only
	// on jobs of the queues Scope's patterns match (none when it holds
	// none). It is created by BulkCreateScoped, so a node that would drop
	// the scope stops instead. Without it, every queue.
	Scoped bool     `codec:"sd,omitempty"`
	Scope  []string `codec:"sc,omitempty"`
}

// BulkOpCmd creates (Op) or cancels (ID) a background operation.
type BulkOpCmd struct {
	NS string  `codec:"ns"`
	Op *BulkOp `codec:"op,omitempty"` // create
	ID string  `codec:"id,omitempty"` // cancel
}

// ReadBulkOp reads a background operation's record.
func ReadBulkOp(r pebble.Reader, ns, id string) (*BulkOp, error) {
	return readRecord[BulkOp](r, keys.BulkOp(ns, id), "bulk operation", id)
}

// applyBulk is the BulkApply of older logs: its deletes leave what waits
// on a deleted job as it was (see applyBulkSettle).
func (e *Engine) applyBulk(tx *replica.Tx, c *BulkCmd) (*BulkOutcome, error) {
	return e.bulk(tx, c, false)
}

// applyBulkSettle applies a bulk step whose deletes settle what waits on
// each deleted job (discard).
func (e *Engine) applyBulkSettle(tx *replica.Tx, c *BulkCmd) (*BulkOutcome, error) {
	return e.bulk(tx, c, true)
}

func (e *Engine) bulk(tx *replica.Tx, c *BulkCmd, settle bool) (*BulkOutcome, error) {
	var op *BulkOp
	if c.Op != "" {
		var err error
		if op, err = ReadBulkOp(tx, c.NS, c.Op); err != nil {
			return nil, err
		}
		if op.Status != wire.BulkProcessing || !bytes.Equal(op.Cursor, c.From) {
			return &BulkOutcome{Stale: true}, nil
		}
	}
	out := &BulkOutcome{}
	for _, id := range c.IDs {
		e.bulkOne(tx, c, id, settle, out)
	}
	if op != nil {
		op.Processed += int64(len(c.IDs))
		op.Affected += out.Affected
		op.Skipped += out.Skipped
		op.Errors += out.Errors
		op.Cursor = c.Next
		if c.Done {
			op.Status, op.FinishedAt = wire.BulkCompleted, tx.Now.UnixNano()
			e.retainRecord(tx, c.NS, op.ID, op.FinishedAt, op.Prunable)
		}
		must(tx.Set(keys.BulkOp(c.NS, op.ID), replica.Encode(op), nil))
	}
	return out, nil
}

// bulkOne applies the action to one job and counts the outcome.
func (e *Engine) bulkOne(tx *replica.Tx, c *BulkCmd, id string, settle bool, out *BulkOutcome) {
	fail := func(msg string) {
		out.Errors++
		if len(out.Failures) < maxBulkFailures {
			out.Failures = append(out.Failures, wire.BulkFailure{JobID: id, Error: msg})
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
	op := &JobOpCmd{NS: c.NS, ID: id, Queue: c.Queue}
	switch c.Action {
	case job.BulkRetry:
		_, err = e.retryJob(tx, op, j)
	case job.BulkDelete:
		if settle {
			_, err = e.discardJob(tx, op, j)
		} else {
			_, err = e.deleteJob(tx, op, j)
		}
	case job.BulkCancel:
		_, err = e.cancelJob(tx, op, j)
	case job.BulkMove:
		_, err = e.moveJob(tx, op, j)
	case job.BulkRequeue:
		e.requeueAs(tx, c.NS, j, job.Pending)
	case job.BulkChangePriority:
		err = e.changePriority(tx, c.NS, j, job.Priority(c.Priority))
	case job.BulkApprove:
		_, err = e.approveJob(tx, op, j)
	case job.BulkReject:
		_, err = e.rejectJob(tx, op, j)
	}
	switch {
	case err == nil:
		out.Affected++
	case apierr.CodeOf(err) == apierr.Conflict || apierr.CodeOf(err) == apierr.BadRequest:
		out.Skipped++ // refused for its state, or already as asked
	default:
		fail(apierr.From(err).Message)
	}
}

// changePriority gives a waiting job another priority; a pending job moves
// in its queue's fetch order.
func (e *Engine) changePriority(tx *replica.Tx, ns string, j *job.Job, p job.Priority) error {
	if j.Priority == p {
		return apierr.Field("priority", "job %s already has priority %s", j.ID, p)
	}
	e.reprioritize(tx, ns, j, p)
	e.putJob(tx, ns, j)
	return nil
}

func (e *Engine) applyBulkCreate(tx *replica.Tx, c *BulkOpCmd) (*BulkOp, error) {
	if _, err := ReadBulkOp(tx, c.NS, c.Op.ID); err == nil {
		return nil, apierr.New(apierr.Conflict, "bulk operation %s exists", c.Op.ID)
	}
	op := *c.Op
	op.Status, op.CreatedAt = wire.BulkProcessing, tx.Now.UnixNano()
	registerNamespace(tx, c.NS)
	must(tx.Set(keys.BulkOp(c.NS, op.ID), replica.Encode(&op), nil))
	return &op, nil
}

func (e *Engine) applyBulkCancel(tx *replica.Tx, c *BulkOpCmd) (*BulkOp, error) {
	op, err := ReadBulkOp(tx, c.NS, c.ID)
	if err != nil {
		return nil, err
	}
	if op.Status == wire.BulkProcessing {
		op.Status, op.FinishedAt = wire.BulkCancelled, tx.Now.UnixNano()
		must(tx.Set(keys.BulkOp(c.NS, op.ID), replica.Encode(op), nil))
		e.retainRecord(tx, c.NS, op.ID, op.FinishedAt, op.Prunable)
	}
	return op, nil
}

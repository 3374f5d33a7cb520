package engine

import (
	"github.com/cockroachdb/pebble"

	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/shard/job"
	"github.com/jobbie/jobbie/shard/keys"
	"github.com/jobbie/jobbie/wire"
)

// A batch is the jobs of one enqueue/batch with a "batch" object. Its
// record (keys.Batch) counts its members; each member's first terminal
// state (completed → succeeded; dead or cancelled → failed) is counted
// once, with a member key (keys.BatchMember) naming the outcome. When the
// last member is counted the callback job is enqueued, once: its id is
// kept in the record. A member retried by hand after it was counted
// changes nothing in its batch, before or after the callback.

// maxCallbackIDs bounds each id list of a callback payload. A batch holds
// at most wire.MaxBatchJobs jobs, so today the lists are complete.
const maxCallbackIDs = 1000

// BatchRecord is the stored batch (MessagePack).
type BatchRecord struct {
	ID              string `codec:"id"`
	Total           int    `codec:"t"`
	Pending         int    `codec:"p"`
	Succeeded       int    `codec:"s"`
	Failed          int    `codec:"f"`
	CallbackQueue   string `codec:"cq"`
	CallbackPayload []byte `codec:"cp"`
	CallbackJobID   string `codec:"cj,omitempty"`
	CreatedAt       int64  `codec:"c"`
	CompletedAt     int64  `codec:"d,omitempty"`
	// Prunable: the record is pruned after the retention period once it
	// fired (records.go). Batches of older logs lack it and stay.
	Prunable bool `codec:"pr,omitempty"`
	// TraceParent and TraceState: the callback job's trace context, if
	// any. Batches of older logs lack them and call back without one.
	TraceParent string `codec:"tp,omitempty"`
	TraceState  string `codec:"ts,omitempty"`

	// Cancelled is how many of Failed were cancelled or deleted
	// unfinished rather than dead, counted once the event log is
	// detailed (EventLogStartDetailed).
	Cancelled int `codec:"x,omitempty"`

	// CallbackSchema is the version of the callback queue's schema the
	// callback payload was checked against (0: none).
	CallbackSchema uint32 `codec:"sv,omitempty"`
}

// callbackTrace is the trace context of b's callback job, or nil.
func (b *BatchRecord) callbackTrace() *job.Trace {
	if b.TraceParent == "" {
		return nil
	}
	return &job.Trace{Parent: b.TraceParent, State: b.TraceState}
}

// Member outcomes, the value of a member key.
const (
	memberSucceeded = 's'
	memberFailed    = 'f'
)

// openBatch writes a new batch record for n members, before they are
// inserted, so a member settled in the same apply finds it.
func openBatch(tx *replica.Tx, ns string, b *BatchRecord, n int) {
	b.Total, b.Pending, b.CreatedAt = n, n, tx.Now.UnixNano()
	b.Succeeded, b.Failed, b.Cancelled, b.CallbackJobID, b.CompletedAt = 0, 0, 0, "", 0
	putBatch(tx, ns, b)
}

// closeBatchOpen takes out the jobs of the request that were not inserted
// (an existing job held their unique key) and fires an empty batch.
func (e *Engine) closeBatchOpen(tx *replica.Tx, ns, id string, skipped int) {
	if skipped == 0 {
		return
	}
	b, err := ReadBatch(tx, ns, id)
	must(err)
	b.Total -= skipped
	b.Pending -= skipped
	if b.Pending == 0 {
		e.fireBatch(tx, ns, b)
	}
	putBatch(tx, ns, b)
}

// countBatchMember counts j's first terminal state in its batch.
func (e *Engine) countBatchMember(tx *replica.Tx, ns string, j *job.Job) {
	j.Flow |= job.FlowBatchCounted
	b, err := ReadBatch(tx, ns, j.BatchID)
	if err != nil {
		return // the batch is gone with its namespace
	}
	outcome := byte(memberFailed)
	if j.State == job.Completed {
		outcome = memberSucceeded
		b.Succeeded++
	} else {
		b.Failed++
		if j.State != job.Dead && e.detailed(tx) {
			b.Cancelled++ // cancelled, or deleted before it finished
		}
	}
	b.Pending--
	must(tx.Set(keys.BatchMember(ns, b.ID, j.ID), []byte{outcome}, nil))
	if b.Pending == 0 && b.CallbackJobID == "" {
		e.fireBatch(tx, ns, b)
	}
	putBatch(tx, ns, b)
}

// fireBatch enqueues the callback job of a batch whose members are all
// counted, listing the first maxCallbackIDs ids of each outcome in id
// (creation) order.
func (e *Engine) fireBatch(tx *replica.Tx, ns string, b *BatchRecord) {
	p := keys.BatchMembers(ns, b.ID)
	it, err := tx.NewIter(&pebble.IterOptions{LowerBound: p, UpperBound: keys.PrefixEnd(p)})
	must(err)
	cb := wire.BatchCallback{BatchID: b.ID, Succeeded: b.Succeeded, Failed: b.Failed, SucceededIDs: []string{}, FailedIDs: []string{},
		CallbackPayload: orNull(b.CallbackPayload)}
	for ok := it.First(); ok; ok = it.Next() {
		id := keys.MemberID(it.Key())
		if v := it.Value(); len(v) == 1 && v[0] == memberSucceeded {
			if len(cb.SucceededIDs) < maxCallbackIDs {
				cb.SucceededIDs = append(cb.SucceededIDs, id)
			}
		} else if len(cb.FailedIDs) < maxCallbackIDs {
			cb.FailedIDs = append(cb.FailedIDs, id)
		}
	}
	must(it.Close())
	b.CallbackJobID = derivedID(tx, "job_", "batch-callback", b.ID)
	b.CompletedAt = tx.Now.UnixNano()
	e.retainRecord(tx, ns, b.ID, b.CompletedAt, b.Prunable)
	e.spawnJob(tx, ns, b.CallbackJobID, b.CallbackQueue, mustJSON(cb), nil, b.callbackTrace(), b.CallbackSchema)
	status := ChainSucceeded
	if b.Failed > 0 {
		status = ChainFailed
	}
	ev := Event{Type: EvBatchCompleted, Subject: b.ID, Queue: b.CallbackQueue, JobID: b.CallbackJobID, Detail: status}
	if e.detailed(tx) {
		ev.Counts = []int{b.Total, b.Succeeded, b.Failed - b.Cancelled, b.Cancelled}
	}
	e.logEvent(tx, ns, ev)
}

// ReadBatch reads a batch record.
func ReadBatch(r pebble.Reader, ns, id string) (*BatchRecord, error) {
	return readRecord[BatchRecord](r, keys.Batch(ns, id), "batch", id)
}

func putBatch(tx *replica.Tx, ns string, b *BatchRecord) {
	must(tx.Set(keys.Batch(ns, b.ID), replica.Encode(b), nil))
}

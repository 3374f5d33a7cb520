package shard

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/cockroachdb/pebble"
	"github.com/gofiber/fiber/v2"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/shard/job"
	"github.com/jobbie/jobbie/shard/keys"
)

// A batch is the jobs of one enqueue/batch with a "batch" object. Its
// record (keys.Batch) counts its members; each member's first terminal
// state (completed → succeeded; dead or cancelled → failed) is counted
// once, with a member key (keys.BatchMember) naming the outcome. When the
// last member is counted the callback job is enqueued, once: its id is
// kept in the record. A member retried by hand after it was counted
// changes nothing in its batch, before or after the callback.

// batchIDLen is the length of a batch id: "batch_" and a ULID.
const batchIDLen = 6 + 26

// maxCallbackIDs bounds each id list of a callback payload. A batch holds
// at most MaxBatchJobs jobs, so today the lists are complete.
const maxCallbackIDs = 1000

// BatchSpec is the "batch" object of enqueue/batch.
type BatchSpec struct {
	CallbackQueue   string          `json:"callback_queue"`
	CallbackPayload json.RawMessage `json:"callback_payload"`
}

// batchRecord is the stored batch (MessagePack).
type batchRecord struct {
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
}

// Member outcomes, the value of a member key.
const (
	memberSucceeded = 's'
	memberFailed    = 'f'
)

// EnqueueBatch enqueues jobs atomically, as one batch with a callback when
// spec is not nil; it returns the batch id ("" without spec).
func (e *Engine) EnqueueBatch(ctx context.Context, ns string, reqs []EnqueueRequest, spec *BatchSpec) ([]enqueueResult, string, error) {
	if spec == nil {
		res, err := e.Enqueue(ctx, ns, reqs, true)
		return res, "", err
	}
	b, err := spec.record(e.newID("batch_"))
	if err != nil {
		return nil, "", err
	}
	res, err := e.enqueue(ctx, ns, reqs, true, b)
	if err != nil {
		return nil, "", err
	}
	return res, b.ID, nil
}

func (s *BatchSpec) record(id string) (*batchRecord, error) {
	if s.CallbackQueue == "" {
		return nil, apierr.Field("batch.callback_queue", "callback_queue is required")
	}
	if err := (&StepSpec{Queue: s.CallbackQueue}).validate("batch.callback_"); err != nil {
		return nil, err
	}
	p, err := checkJSON("batch.callback_payload", s.CallbackPayload, MaxPayloadBytes)
	if err != nil {
		return nil, err
	}
	return &batchRecord{ID: id, CallbackQueue: s.CallbackQueue, CallbackPayload: p}, nil
}

// openBatch writes a new batch record for n members, before they are
// inserted, so a member settled in the same apply finds it.
func openBatch(tx *replica.Tx, ns string, b *batchRecord, n int) {
	b.Total, b.Pending, b.CreatedAt = n, n, tx.Now.UnixNano()
	b.Succeeded, b.Failed, b.CallbackJobID, b.CompletedAt = 0, 0, "", 0
	putBatch(tx, ns, b)
}

// closeBatchOpen takes out the jobs of the request that were not inserted
// (an existing job held their unique key) and fires an empty batch.
func (e *Engine) closeBatchOpen(tx *replica.Tx, ns, id string, skipped int) {
	if skipped == 0 {
		return
	}
	b, err := getBatch(tx, ns, id)
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
	b, err := getBatch(tx, ns, j.BatchID)
	if err != nil {
		return // the batch is gone with its namespace
	}
	outcome := byte(memberFailed)
	if j.State == job.Completed {
		outcome = memberSucceeded
		b.Succeeded++
	} else {
		b.Failed++
	}
	b.Pending--
	must(tx.Set(keys.BatchMember(ns, b.ID, j.ID), []byte{outcome}, nil))
	if b.Pending == 0 && b.CallbackJobID == "" {
		e.fireBatch(tx, ns, b)
	}
	putBatch(tx, ns, b)
}

// batchCallback is the payload of a batch's callback job.
type batchCallback struct {
	BatchID         string   `json:"batch_id"`
	Succeeded       int      `json:"succeeded"`
	Failed          int      `json:"failed"`
	SucceededIDs    []string `json:"succeeded_ids"`
	FailedIDs       []string `json:"failed_ids"`
	CallbackPayload any      `json:"callback_payload"`
}

// fireBatch enqueues the callback job of a batch whose members are all
// counted, listing the first maxCallbackIDs ids of each outcome in id
// (creation) order.
func (e *Engine) fireBatch(tx *replica.Tx, ns string, b *batchRecord) {
	p := keys.BatchMembers(ns, b.ID)
	it, err := tx.NewIter(&pebble.IterOptions{LowerBound: p, UpperBound: keys.PrefixEnd(p)})
	must(err)
	cb := batchCallback{BatchID: b.ID, Succeeded: b.Succeeded, Failed: b.Failed, SucceededIDs: []string{}, FailedIDs: []string{},
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
	e.spawnJob(tx, ns, b.CallbackJobID, b.CallbackQueue, mustJSON(cb))
}

func getBatch(r pebble.Reader, ns, id string) (*batchRecord, error) {
	v, closer, err := r.Get(keys.Batch(ns, id))
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, apierr.New(apierr.NotFound, "batch %s not found", id)
	}
	if err != nil {
		return nil, fmt.Errorf("shard: read batch %s: %w", id, err)
	}
	defer closer.Close()
	b := new(batchRecord)
	if err := decode(v, b); err != nil {
		return nil, fmt.Errorf("shard: decode batch %s: %w", id, err)
	}
	return b, nil
}

func putBatch(tx *replica.Tx, ns string, b *batchRecord) {
	must(tx.Set(keys.Batch(ns, b.ID), encode(b), nil))
}

// GetBatch reads a batch from local state.
func (e *Engine) GetBatch(ns, id string) (*BatchView, error) {
	if err := namespaceOK(ns); err != nil {
		return nil, err
	}
	if len(id) != batchIDLen || id[:6] != "batch_" {
		return nil, apierr.New(apierr.NotFound, "batch %q not found", id)
	}
	b, err := getBatch(e.node.DB(), ns, id)
	if err != nil {
		return nil, err
	}
	return batchView(b), nil
}

// BatchView is the body of GET /api/v1/batches/{id}.
type BatchView struct {
	ID            string     `json:"id"`
	Total         int        `json:"total"`
	Pending       int        `json:"pending"`
	Succeeded     int        `json:"succeeded"`
	Failed        int        `json:"failed"`
	CallbackQueue string     `json:"callback_queue"`
	CallbackJobID *string    `json:"callback_job_id"`
	CreatedAt     *time.Time `json:"created_at"`
	CompletedAt   *time.Time `json:"completed_at"`
}

func batchView(b *batchRecord) *BatchView {
	v := &BatchView{ID: b.ID, Total: b.Total, Pending: b.Pending, Succeeded: b.Succeeded, Failed: b.Failed,
		CallbackQueue: b.CallbackQueue, CreatedAt: ts(b.CreatedAt), CompletedAt: ts(b.CompletedAt)}
	if b.CallbackJobID != "" {
		v.CallbackJobID = &b.CallbackJobID
	}
	return v
}

func (s *Server) getBatch(c *fiber.Ctx) error {
	v, err := s.GetBatch(ns(c), c.Params("id"))
	if err != nil {
		return err
	}
	return c.JSON(v)
}

package shard

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/shard/job"
)

// Limits of the batch worker calls.
const (
	DefaultFetchBatch = 100  // jobs per fetch/batch when max is not given
	MaxFetchBatch     = 1000 // most jobs one fetch/batch may lease
	MaxAckBatch       = 1000 // most acks in one ack/batch
)

// FetchBatchRequest is a worker's long-poll for up to Max jobs.
type FetchBatchRequest struct {
	FetchRequest
	Max *int `json:"max"` // 1..1000; default 100
}

func (r *FetchBatchRequest) max() (int, error) {
	if r.Max == nil {
		return DefaultFetchBatch, nil
	}
	if *r.Max < 1 || *r.Max > MaxFetchBatch {
		return 0, apierr.Field("max", "max must be between 1 and %d; got %d", MaxFetchBatch, *r.Max)
	}
	return *r.Max, nil
}

// FetchBatch leases up to the request's max jobs to the worker in one
// command, waiting up to its timeout until at least one is available. It
// returns an empty slice when none came.
func (e *Engine) FetchBatch(ctx context.Context, ns string, r *FetchBatchRequest) ([]*job.Job, error) {
	if err := namespaceOK(ns); err != nil {
		return nil, err
	}
	wait, lease, err := r.validate(e.cfg.MaxFetchTimeout)
	if err != nil {
		return nil, err
	}
	n, err := r.max()
	if err != nil {
		return nil, err
	}
	c := &fetchBatchCmd{Max: n, Fetch: fetchCmd{NS: ns, Queues: r.Queues, WorkerID: r.WorkerID, Hostname: r.Hostname,
		LeaseNs: int64(lease), LeaseDefault: r.LeaseDuration == nil}}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for {
		// Park before looking, as Fetch does, so no wake-up is missed.
		w := e.waiters.park(ns, r.Queues)
		if e.anyPending(ns, r.Queues) {
			res, err := e.propose(ctx, cmdFetchBatch, c)
			if err != nil {
				e.waiters.leave(w, false)
				return nil, err
			}
			if jobs := res.([]*job.Job); len(jobs) > 0 {
				e.waiters.leave(w, true)
				return jobs, nil
			}
		}
		select {
		case <-w.ch:
			e.waiters.leave(w, true)
		case <-timer.C:
			e.waiters.leave(w, false)
			return []*job.Job{}, nil
		case <-ctx.Done():
			e.waiters.leave(w, false)
			return []*job.Job{}, nil
		case <-e.stop:
			e.waiters.leave(w, false)
			return []*job.Job{}, nil
		}
	}
}

// AckBatchRequest completes many jobs of one worker.
type AckBatchRequest struct {
	Acks     []AckBatchEntry `json:"acks"`
	WorkerID string          `json:"worker_id"`
}

// AckBatchEntry is one job's ack in a batch.
type AckBatchEntry struct {
	JobID      string          `json:"job_id"`
	Result     json.RawMessage `json:"result"`
	StepStatus string          `json:"step_status"` // as on a single ack
}

// AckBatchResult is one job's outcome: its settled status, or its error.
type AckBatchResult struct {
	JobID  string         `json:"job_id"`
	Status string         `json:"status,omitempty"`
	Error  *AckBatchError `json:"error,omitempty"`
}

// AckBatchError says why one ack of a batch was refused.
type AckBatchError struct {
	Code    apierr.Code `json:"code"`
	Message string      `json:"message"`
}

// AckBatch acks each job in one command. Bad input (no acks, too many, a
// result over its limit) refuses the whole batch; a job that is unknown
// or not active under this worker gets its own error and the rest are
// acked. Results are in request order.
func (e *Engine) AckBatch(ctx context.Context, ns string, r *AckBatchRequest) ([]AckBatchResult, error) {
	if err := namespaceOK(ns); err != nil {
		return nil, err
	}
	if len(r.Acks) == 0 {
		return nil, apierr.Field("acks", "acks must hold at least one ack")
	}
	if len(r.Acks) > MaxAckBatch {
		return nil, apierr.Field("acks", "at most %d acks per batch; got %d", MaxAckBatch, len(r.Acks))
	}
	out := make([]AckBatchResult, len(r.Acks))
	c := &ackBatchCmd{NS: ns, WorkerID: r.WorkerID, Items: make([]ackBatchItem, 0, len(r.Acks))}
	at := make([]int, 0, len(r.Acks)) // out index of each command item
	for i, a := range r.Acks {
		res, err := checkJSON(fmt.Sprintf("acks[%d].result", i), a.Result, MaxPayloadBytes)
		if err != nil {
			return nil, err
		}
		if err := stepStatusOK(fmt.Sprintf("acks[%d].step_status", i), a.StepStatus); err != nil {
			return nil, err
		}
		out[i].JobID = a.JobID
		if err := jobIDOK(a.JobID); err != nil {
			out[i].Error = ackBatchError(apierr.From(err))
			continue
		}
		c.Items = append(c.Items, ackBatchItem{ID: a.JobID, Result: res, Step: a.StepStatus})
		at = append(at, i)
	}
	if len(c.Items) == 0 {
		return out, nil
	}
	res, err := e.propose(ctx, cmdAckBatch, c)
	if err != nil {
		return nil, err
	}
	for k, o := range res.([]ackOutcome) {
		i := at[k]
		if o.Err != nil {
			out[i].Error = ackBatchError(o.Err)
		} else {
			out[i].Status = o.State.String()
		}
	}
	return out, nil
}

func ackBatchError(e *apierr.Error) *AckBatchError {
	return &AckBatchError{Code: e.Code, Message: e.Message}
}

// fetchBatch answers 200 {"jobs":[…]} always: an empty list when the wait
// ended with no job.
func (s *Server) fetchBatch(c *fiber.Ctx) error {
	var r FetchBatchRequest
	if err := decodeBody(c.Body(), &r, false); err != nil {
		return err
	}
	start := time.Now()
	s.workers.seen(ns(c), r.WorkerID, r.Hostname, r.Queues)
	jobs, err := s.FetchBatch(c.UserContext(), ns(c), &r)
	if err != nil {
		return err
	}
	out := make([]*FetchedJob, len(jobs))
	for i, j := range jobs {
		out[i] = fetchedView(j)
	}
	if len(jobs) > 0 {
		observeFetch(ns(c), start)
	}
	return c.JSON(fiber.Map{"jobs": out})
}

func (s *Server) ackBatch(c *fiber.Ctx) error {
	var r AckBatchRequest
	if err := decodeBody(c.Body(), &r, false); err != nil {
		return err
	}
	res, err := s.AckBatch(c.UserContext(), ns(c), &r)
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"results": res})
}

package client

import (
	"context"
	"fmt"
	"time"

	"github.com/jobbie/jobbie/wire"
)

// FetchBatchRequest asks for up to Max jobs of any of Queues in one call.
type FetchBatchRequest struct {
	Queues   []string
	WorkerID string
	Hostname string
	// Max is the most jobs to lease (1..1000); zero uses the server's
	// default (100).
	Max int
	// Timeout is how long the server may wait for a first job; zero uses
	// the server's default (30s).
	Timeout time.Duration
	// LeaseDuration asks for leases of this length; zero uses the
	// server's default (60s).
	LeaseDuration time.Duration
}

// FetchBatch long-polls for jobs and leases up to req.Max of them at
// once, each as Fetch would. It returns an empty slice when no job came
// within the timeout; call it again. WorkerID defaults to the client's.
func (c *Client) FetchBatch(ctx context.Context, req FetchBatchRequest) ([]*Job, error) {
	ctx, cancel := bound(ctx, req.Timeout)
	defer cancel()
	in := wire.FetchBatchRequest{FetchRequest: FetchRequest{
		Queues: req.Queues, WorkerID: req.WorkerID, Hostname: req.Hostname,
		Timeout: req.Timeout, LeaseDuration: req.LeaseDuration,
	}.toWire(c.workerID)}
	if req.Max != 0 {
		in.Max = &req.Max
	}
	var out wire.FetchBatchResponse
	if _, err := c.do(ctx, "POST", "/api/v1/fetch/batch", in, &out); err != nil {
		return nil, err
	}
	jobs := make([]*Job, len(out.Jobs))
	for i, j := range out.Jobs {
		jobs[i] = jobFromWire(j)
	}
	return jobs, nil
}

// AckItem is one job's ack in AckBatch: its id and its result (any
// JSON-encodable value, or nil).
type AckItem struct {
	JobID  string
	Result any
	// StepStatus steers a chain step: StepContinue (the default) or StepExit.
	StepStatus string
	// LeaseToken is the fetched Job's: the ack then settles that lease
	// only (see Lease).
	LeaseToken string
}

// AckResult is one job's outcome in AckBatch: Status "completed" (or
// "cancelled" when the job was cancelled while it ran), or Err when the
// server refused this ack (Code lease_mismatch, not_found…; Status is 0,
// as the refusal has no HTTP status of its own).
type AckResult struct {
	JobID  string
	Status string
	Err    *Error
}

// Acked reports whether the job was settled by the ack.
func (r AckResult) Acked() bool { return r.Err == nil }

// AckBatch completes many jobs in one call (at most 1,000). The call
// succeeds when the server took the batch; each job's own outcome is in
// the results, in the order of items. Like Ack, it carries the client's
// worker id.
func (c *Client) AckBatch(ctx context.Context, items []AckItem) ([]AckResult, error) {
	in := wire.AckBatchRequest{Acks: make([]wire.AckBatchEntry, len(items)), WorkerID: c.workerID}
	for i, it := range items {
		raw, err := marshalRaw(it.Result)
		if err != nil {
			return nil, fmt.Errorf("jobbie: ack batch: result of job %s: %w", it.JobID, err)
		}
		in.Acks[i] = wire.AckBatchEntry{JobID: it.JobID, Result: raw, StepStatus: it.StepStatus, LeaseToken: it.LeaseToken}
	}
	var out wire.AckBatchResponse
	if _, err := c.do(ctx, "POST", "/api/v1/ack/batch", in, &out); err != nil {
		return nil, err
	}
	res := make([]AckResult, len(out.Results))
	for i, w := range out.Results {
		res[i] = AckResult{JobID: w.JobID, Status: w.Status}
		if w.Error != nil {
			res[i].Err = &Error{Code: string(w.Error.Code), Message: w.Error.Message}
		}
	}
	return res, nil
}

package client

import (
	"context"
	"time"
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

type fetchBatchWire struct {
	fetchWire
	Max int `json:"max,omitempty"`
}

// FetchBatch long-polls for jobs and leases up to req.Max of them at
// once, each as Fetch would. It returns an empty slice when no job came
// within the timeout; call it again. WorkerID defaults to the client's.
func (c *Client) FetchBatch(ctx context.Context, req FetchBatchRequest) ([]*Job, error) {
	wait := req.Timeout
	if wait <= 0 {
		wait = defaultFetchWait
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, wait+fetchSlack)
		defer cancel()
	}
	in := fetchBatchWire{Max: req.Max, fetchWire: fetchWire{
		Queues: req.Queues, WorkerID: req.WorkerID, Hostname: req.Hostname,
		Timeout: req.Timeout.Seconds(), LeaseDuration: req.LeaseDuration.Seconds(),
	}}
	if in.WorkerID == "" {
		in.WorkerID = c.workerID
	}
	var out struct {
		Jobs []*Job `json:"jobs"`
	}
	if _, err := c.do(ctx, "POST", "/api/v1/fetch/batch", in, &out); err != nil {
		return nil, err
	}
	if out.Jobs == nil {
		out.Jobs = []*Job{}
	}
	return out.Jobs, nil
}

// AckItem is one job's ack in AckBatch: its id and its result (any
// JSON-encodable value, or nil).
type AckItem struct {
	JobID  string `json:"job_id"`
	Result any    `json:"result,omitempty"`
	// StepStatus steers a chain step: StepContinue (the default) or StepExit.
	StepStatus string `json:"step_status,omitempty"`
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

type ackResultWire struct {
	JobID  string `json:"job_id"`
	Status string `json:"status"`
	Error  *struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// AckBatch completes many jobs in one call (at most 1,000). The call
// succeeds when the server took the batch; each job's own outcome is in
// the results, in the order of items. Like Ack, it carries the client's
// worker id.
func (c *Client) AckBatch(ctx context.Context, items []AckItem) ([]AckResult, error) {
	in := struct {
		Acks     []AckItem `json:"acks"`
		WorkerID string    `json:"worker_id,omitempty"`
	}{items, c.workerID}
	if in.Acks == nil {
		in.Acks = []AckItem{}
	}
	var out struct {
		Results []ackResultWire `json:"results"`
	}
	if _, err := c.do(ctx, "POST", "/api/v1/ack/batch", in, &out); err != nil {
		return nil, err
	}
	res := make([]AckResult, len(out.Results))
	for i, w := range out.Results {
		res[i] = AckResult{JobID: w.JobID, Status: w.Status}
		if w.Error != nil {
			res[i].Err = &Error{Code: w.Error.Code, Message: w.Error.Message}
		}
	}
	return res, nil
}

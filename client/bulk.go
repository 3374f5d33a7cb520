package client

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/jobbie/jobbie/wire"
)

// Bulk actions (BulkRequest.Action). Each applies only to jobs in the
// states it makes sense for; the others are counted as skipped.
const (
	BulkRetry          = wire.BulkRetry          // dead, cancelled, completed → pending, attempts reset
	BulkDelete         = wire.BulkDelete         // any state
	BulkCancel         = wire.BulkCancel         // pending, active, scheduled, retrying
	BulkMove           = wire.BulkMove           // to BulkRequest.MoveToQueue
	BulkRequeue        = wire.BulkRequeue        // dead → pending, attempt history kept
	BulkChangePriority = wire.BulkChangePriority // to BulkRequest.Priority
	BulkApprove        = wire.BulkApprove        // held by an AI budget → runs, outside the budget
	BulkReject         = wire.BulkReject         // held by an AI budget → cancelled (budget_rejected)
)

// Bulk operation statuses (BulkOperation.Status).
const (
	BulkProcessing = wire.BulkProcessing
	BulkCompleted  = wire.BulkCompleted
	BulkCancelled  = wire.BulkCancelled
)

// MaxBulkJobIDs is the most job ids one bulk request may name; send more
// in several requests, or select them with a filter.
const MaxBulkJobIDs = wire.MaxBulkIDs

// BulkRequest applies Action to the jobs named by JobIDs or, instead,
// to every job Filter selects. A filter matching more than 10,000 jobs
// starts a bulk operation that runs on in the background.
type BulkRequest struct {
	JobIDs      []string
	Filter      *SearchFilter
	Action      string
	MoveToQueue string   // with BulkMove
	Priority    Priority // with BulkChangePriority
}

// MarshalJSON writes the request as a wire.BulkRequest.
func (r BulkRequest) MarshalJSON() ([]byte, error) {
	filter, err := encodeOptional(r.Filter)
	if err != nil {
		return nil, err
	}
	return json.Marshal(wire.BulkRequest{JobIDs: r.JobIDs, Filter: filter, Action: r.Action,
		MoveToQueue: r.MoveToQueue, Priority: r.Priority})
}

// UnmarshalJSON reads a wire.BulkRequest.
func (r *BulkRequest) UnmarshalJSON(b []byte) error {
	var w wire.BulkRequest
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	filter, err := decodeOptional[SearchFilter](w.Filter)
	*r = BulkRequest{JobIDs: w.JobIDs, Filter: filter, Action: w.Action, MoveToQueue: w.MoveToQueue, Priority: w.Priority}
	return err
}

// BulkResult is the answer to a bulk request the server finished at once.
type BulkResult struct {
	Affected int64
	Skipped  int64 // not in a state the action applies to
	Errors   int64
	Duration time.Duration
	// Failures names some of the jobs counted in Errors (at most 100).
	Failures []BulkFailure
}

// BulkFailure is one job a bulk action failed on.
type BulkFailure = wire.BulkFailure

// BulkOperation is a bulk request running (or done running) in the
// background. Total is how many jobs the operation covers (when Bulk
// starts it, the server's estimate); FinishedAt is nil while processing.
type BulkOperation wire.BulkOperation

// Done reports whether the operation stopped, finished or cancelled.
func (o BulkOperation) Done() bool { return o.Status != "" && o.Status != BulkProcessing }

// Bulk applies an action to many jobs. Exactly one of its results is not
// nil: the BulkResult when the server finished at once, or the started
// BulkOperation (follow it with WatchBulk or BulkStatus) when the filter
// matched too many jobs to answer synchronously.
func (c *Client) Bulk(ctx context.Context, req BulkRequest) (*BulkResult, *BulkOperation, error) {
	if err := req.check(); err != nil {
		return nil, nil, err
	}
	// Either shape may come back: the result (200) or the started
	// operation (202). Their fields do not overlap.
	var a struct {
		wire.BulkResult
		wire.BulkAccepted
	}
	status, err := c.do(ctx, "POST", "/api/v1/jobs/bulk", req, &a)
	if err != nil {
		return nil, nil, err
	}
	if status == http.StatusAccepted || a.BulkOperationID != "" {
		return nil, &BulkOperation{
			ID: a.BulkOperationID, Action: req.Action, Status: a.Status,
			Total: a.EstimatedTotal, ProgressURL: a.ProgressURL,
		}, nil
	}
	return &BulkResult{
		Affected: a.Affected, Skipped: a.Skipped, Errors: a.BulkResult.Errors,
		Duration: time.Duration(a.DurationMs * float64(time.Millisecond)), Failures: a.Failures,
	}, nil, nil
}

// check refuses what the server would refuse anyway, saving the round
// trip; the server checks everything else.
func (r *BulkRequest) check() error {
	switch {
	case r.Action == "":
		return errors.New("jobbie: bulk: no action")
	case len(r.JobIDs) > 0 && r.Filter != nil:
		return errors.New("jobbie: bulk: job ids and a filter are exclusive")
	case len(r.JobIDs) == 0 && r.Filter == nil:
		return errors.New("jobbie: bulk: no job ids and no filter")
	case len(r.JobIDs) > MaxBulkJobIDs:
		return fmt.Errorf("jobbie: bulk: %d job ids, at most %d per request", len(r.JobIDs), MaxBulkJobIDs)
	case r.Action == BulkMove && r.MoveToQueue == "":
		return errors.New("jobbie: bulk: move needs MoveToQueue")
	case r.Action == BulkChangePriority && r.Priority == "":
		return errors.New("jobbie: bulk: change_priority needs Priority")
	}
	return nil
}

// BulkStatus returns a bulk operation's progress; one of another
// namespace or tenant is not found.
func (c *Client) BulkStatus(ctx context.Context, id string) (*BulkOperation, error) {
	var out BulkOperation
	if _, err := c.do(ctx, "GET", "/api/v1/bulk/"+url.PathEscape(id), nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// BulkPage is a page of ListBulk: background bulk operations, newest
// first. Cursor is "" on the last page; pass it back for the next.
type BulkPage struct {
	Operations []BulkOperation
	Cursor     string
	HasMore    bool
}

// ListBulk lists the namespace's background bulk operations, running and
// finished (until the retention period prunes them), newest first.
// limit is 1 to 1,000, or 0 for the server's 100; cursor is "" for the
// first page.
func (c *Client) ListBulk(ctx context.Context, limit int, cursor string) (*BulkPage, error) {
	q := url.Values{}
	if limit != 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	if cursor != "" {
		q.Set("cursor", cursor)
	}
	path := "/api/v1/bulk"
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	var w wire.BulkOperationList
	if _, err := c.do(ctx, "GET", path, nil, &w); err != nil {
		return nil, err
	}
	out := &BulkPage{Operations: make([]BulkOperation, len(w.Operations)), Cursor: deref(w.Cursor), HasMore: w.HasMore}
	for i, op := range w.Operations {
		out.Operations[i] = BulkOperation(op)
	}
	return out, nil
}

// CancelBulk stops a running bulk operation and returns its status; what
// it already did stays done.
func (c *Client) CancelBulk(ctx context.Context, id string) (*BulkOperation, error) {
	var out BulkOperation
	if _, err := c.do(ctx, "DELETE", "/api/v1/bulk/"+url.PathEscape(id), nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// watchRetryPause is how long WatchBulk waits before reopening a
// progress stream that broke while the operation still ran.
const watchRetryPause = time.Second

// WatchBulk follows a bulk operation's progress stream, calling fn (when
// not nil) with every update, and returns the final status once the
// operation is done. A stream that breaks early is reopened, so only ctx,
// an API error or a malformed update end the watch before that; the
// operation itself runs on regardless (CancelBulk stops it).
func (c *Client) WatchBulk(ctx context.Context, id string, fn func(BulkOperation)) (BulkOperation, error) {
	var last BulkOperation
	for {
		final, done, err := c.watchBulkOnce(ctx, id, func(op BulkOperation) {
			last = op
			if fn != nil {
				fn(op)
			}
		})
		if err != nil {
			return last, err
		}
		if final != nil {
			return *final, nil
		}
		// The done event carried no status, or the stream broke: the
		// status endpoint has the answer.
		op, err := c.BulkStatus(ctx, id)
		if err != nil {
			return last, err
		}
		if done || op.Done() {
			return *op, nil
		}
		last = *op
		select {
		case <-ctx.Done():
			return last, ctx.Err()
		case <-time.After(watchRetryPause):
		}
	}
}

// errStreamDone ends readSSE at the done event.
var errStreamDone = errors.New("done")

// watchBulkOnce reads one progress stream until its done event (done is
// true; final is the status it carried, if any) or its end. A broken
// connection is no error: the caller asks the status endpoint. Errors are
// the API's, a malformed update, or ctx's.
func (c *Client) watchBulkOnce(ctx context.Context, id string, fn func(BulkOperation)) (final *BulkOperation, done bool, err error) {
	path := "/api/v1/bulk/" + url.PathEscape(id) + "/progress"
	req, err := c.newRequest(ctx, "GET", path, nil)
	if err != nil {
		return nil, false, err
	}
	req.Header.Set("Accept", "text/event-stream")
	resp, err := c.hc.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, false, ctx.Err()
		}
		return nil, false, fmt.Errorf("jobbie: GET %s: %w", path, err)
	}
	defer drain(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return nil, false, parseError(resp)
	}
	var malformed error
	_ = readSSE(bufio.NewReader(resp.Body), func(f sseFrame) error {
		switch f.Event {
		case "progress":
			var op BulkOperation
			if err := json.Unmarshal([]byte(f.Data), &op); err != nil {
				malformed = fmt.Errorf("jobbie: GET %s: progress event: %w", path, err)
				return malformed
			}
			fn(op)
		case "done":
			done = true
			var op BulkOperation
			if json.Unmarshal([]byte(f.Data), &op) == nil && op.Status != "" {
				final = &op
			}
			return errStreamDone
		}
		return nil
	})
	if ctx.Err() != nil {
		return nil, false, ctx.Err()
	}
	if malformed != nil {
		return nil, false, malformed
	}
	return final, done, nil
}

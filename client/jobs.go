package client

import (
	"context"
	"net/url"
	"strconv"

	"github.com/jobbie/jobbie/wire"
)

// Job management: retry, cancel, move, delete, and the dead-job listing.
// Each needs a key whose role may manage jobs (ListDead: read them); a job
// of another namespace or tenant is not found.

// Cancel outcomes.
const (
	CancelDone       = wire.CancelDone      // the job was waiting and is cancelled
	CancelRequesting = wire.CancelRequested // the job is running; its worker is told at once on the stream, else by its next heartbeat
)

// TimelineEvent is one entry of a job's timeline. Event is one of
// enqueued, started, progress, failed, retry_scheduled, lease_expired,
// completed, cancelled, cancel_requested, moved, retried, expired, dead.
type TimelineEvent = wire.TimelineEvent

// JobOpResult is the answer to RetryJob and MoveJob: Status is the job's
// state afterwards.
type JobOpResult = wire.JobOpResponse

// RetryJob puts a dead, cancelled or completed job back to pending with
// its attempts reset; its error history is kept.
func (c *Client) RetryJob(ctx context.Context, id string) (*JobOpResult, error) {
	var out JobOpResult
	if _, err := c.do(ctx, "POST", "/api/v1/jobs/"+url.PathEscape(id)+"/retry", nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// CancelJob cancels a job and returns CancelDone or CancelRequesting.
func (c *Client) CancelJob(ctx context.Context, id string) (string, error) {
	var out wire.StatusResponse
	if _, err := c.do(ctx, "POST", "/api/v1/jobs/"+url.PathEscape(id)+"/cancel", nil, &out); err != nil {
		return "", err
	}
	return out.Status, nil
}

// MoveJob moves a job that is not running to another queue.
func (c *Client) MoveJob(ctx context.Context, id, queue string) (*JobOpResult, error) {
	var out JobOpResult
	body := wire.MoveRequest{Queue: queue}
	if _, err := c.do(ctx, "POST", "/api/v1/jobs/"+url.PathEscape(id)+"/move", body, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// DeleteJob deletes a job that is not running (cancel a running one first).
func (c *Client) DeleteJob(ctx context.Context, id string) error {
	_, err := c.do(ctx, "DELETE", "/api/v1/jobs/"+url.PathEscape(id), nil, nil)
	return err
}

// DeadQuery selects a page of dead jobs.
type DeadQuery struct {
	Queue  string // "" = every queue
	Limit  int    // 0 = the server's default (50); at most 1000
	Cursor string // DeadPage.Cursor of the previous page
}

// DeadJob is a dead job as listed. LastError is nil when it never failed
// (it expired).
type DeadJob = wire.DeadJob

// DeadPage is one page of dead jobs, newest first. Cursor is nil on the
// last page.
type DeadPage = wire.DeadPage

// ListDead returns a page of the namespace's dead jobs, newest first.
func (c *Client) ListDead(ctx context.Context, q DeadQuery) (*DeadPage, error) {
	v := url.Values{}
	if q.Queue != "" {
		v.Set("queue", q.Queue)
	}
	if q.Limit != 0 {
		v.Set("limit", strconv.Itoa(q.Limit))
	}
	if q.Cursor != "" {
		v.Set("cursor", q.Cursor)
	}
	path := "/api/v1/dead"
	if len(v) > 0 {
		path += "?" + v.Encode()
	}
	var out DeadPage
	if _, err := c.do(ctx, "GET", path, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

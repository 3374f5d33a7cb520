package client

import (
	"context"
	"encoding/json"
	"net/url"
	"strconv"
	"time"
)

// Job management: retry, cancel, move, delete, and the dead-job listing.
// Each needs a key whose role may manage jobs (ListDead: read them); a job
// of another namespace or tenant is not found.

// Cancel outcomes.
const (
	CancelDone       = "cancelled"  // the job was waiting and is cancelled
	CancelRequesting = "cancelling" // the job is running; its worker is told by its next heartbeat
)

// TimelineEvent is one entry of a job's timeline.
type TimelineEvent struct {
	At     time.Time `json:"at"`
	Event  string    `json:"event"` // enqueued, started, progress, failed, retry_scheduled, lease_expired, completed, cancelled, cancel_requested, moved, retried, expired, dead
	Detail string    `json:"detail,omitempty"`
}

// JobOpResult is the answer to RetryJob and MoveJob.
type JobOpResult struct {
	JobID  string `json:"job_id"`
	Status string `json:"status"` // the job's state afterwards
	Queue  string `json:"queue,omitempty"`
}

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
	var out struct {
		Status string `json:"status"`
	}
	if _, err := c.do(ctx, "POST", "/api/v1/jobs/"+url.PathEscape(id)+"/cancel", nil, &out); err != nil {
		return "", err
	}
	return out.Status, nil
}

// MoveJob moves a job that is not running to another queue.
func (c *Client) MoveJob(ctx context.Context, id, queue string) (*JobOpResult, error) {
	var out JobOpResult
	body := map[string]string{"queue": queue}
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

// DeadJob is a dead job as listed.
type DeadJob struct {
	ID         string            `json:"id"`
	Queue      string            `json:"queue"`
	Payload    json.RawMessage   `json:"payload"`
	CreatedAt  time.Time         `json:"created_at"`
	DiedAt     time.Time         `json:"died_at"`
	Attempt    int               `json:"attempt"`
	MaxRetries int               `json:"max_retries"`
	DeadReason string            `json:"dead_reason"`
	LastError  string            `json:"last_error"`
	Tags       map[string]string `json:"tags"`
}

// DeadPage is one page of dead jobs, newest first.
type DeadPage struct {
	Jobs    []DeadJob `json:"jobs"`
	Cursor  string    `json:"cursor"` // "" on the last page
	HasMore bool      `json:"has_more"`
}

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

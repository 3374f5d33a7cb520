package client

import (
	"context"
	"net/url"
	"time"
)

// Queue is a queue of the namespace with its counts and settings.
type Queue struct {
	Name   string      `json:"name"`
	Counts QueueCounts `json:"counts"`
	// Throughput is completed jobs per minute over the last five minutes.
	Throughput float64 `json:"throughput"`
	// OldestPendingAge is how long, in seconds, the oldest pending job has waited.
	OldestPendingAge float64        `json:"oldest_pending_age"`
	Paused           bool           `json:"paused"`
	Draining         bool           `json:"draining"`
	Drained          bool           `json:"drained"` // draining and no job active
	Concurrency      *int64         `json:"concurrency"`
	Throttle         *QueueThrottle `json:"throttle"`
	Defaults         *QueueDefaults `json:"defaults"`
}

// QueueCounts are a queue's jobs per state.
type QueueCounts struct {
	Pending   int64 `json:"pending"`
	Scheduled int64 `json:"scheduled"`
	Active    int64 `json:"active"`
	Retrying  int64 `json:"retrying"`
	Completed int64 `json:"completed"`
	Dead      int64 `json:"dead"`
	Cancelled int64 `json:"cancelled"`
	Held      int64 `json:"held"` // waiting on dependencies
}

// QueueThrottle is a queue's rate limit as the server shows it.
type QueueThrottle struct {
	Rate   int64  `json:"rate"`
	Period string `json:"period"`
}

// QueueDefaults are what a queue's jobs get for fields their producer left
// out (and a fetch without lease_duration). Durations are strings like
// "30s"; nil fields have no queue default.
type QueueDefaults struct {
	MaxRetries     *int     `json:"max_retries"`
	RetryBackoff   *Backoff `json:"retry_backoff"`
	RetryBaseDelay *string  `json:"retry_base_delay"`
	RetryMaxDelay  *string  `json:"retry_max_delay"`
	LeaseDuration  *string  `json:"lease_duration"`
	Retention      *string  `json:"retention"`
}

// DrainResult is the answer to a drain.
type DrainResult struct {
	Queue   string `json:"queue"`
	Active  int64  `json:"active"`
	Drained bool   `json:"drained"`
}

func queuePath(name string, action string) string {
	p := "/api/v1/queues/" + url.PathEscape(name)
	if action != "" {
		p += "/" + action
	}
	return p
}

// ListQueues lists the queues of the namespace.
func (c *Client) ListQueues(ctx context.Context) ([]Queue, error) {
	var out struct {
		Queues []Queue `json:"queues"`
	}
	if _, err := c.do(ctx, "GET", "/api/v1/queues", nil, &out); err != nil {
		return nil, err
	}
	return out.Queues, nil
}

// GetQueue reads one queue.
func (c *Client) GetQueue(ctx context.Context, name string) (*Queue, error) {
	return c.queueCall(ctx, "GET", queuePath(name, ""), nil)
}

func (c *Client) queueCall(ctx context.Context, method, path string, in any) (*Queue, error) {
	var out Queue
	if _, err := c.do(ctx, method, path, in, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// PauseQueue stops workers getting jobs from the queue; enqueues go on.
func (c *Client) PauseQueue(ctx context.Context, name string) (*Queue, error) {
	return c.queueCall(ctx, "POST", queuePath(name, "pause"), nil)
}

// ResumeQueue lets workers get the queue's jobs again.
func (c *Client) ResumeQueue(ctx context.Context, name string) (*Queue, error) {
	return c.queueCall(ctx, "POST", queuePath(name, "resume"), nil)
}

// DrainQueue pauses the queue and reports its active jobs; GetQueue shows
// Drained once they finished.
func (c *Client) DrainQueue(ctx context.Context, name string) (*DrainResult, error) {
	var out DrainResult
	if _, err := c.do(ctx, "POST", queuePath(name, "drain"), nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ClearQueue deletes the queue's pending and scheduled jobs and returns how many.
func (c *Client) ClearQueue(ctx context.Context, name string) (int, error) {
	var out struct {
		Cleared int `json:"cleared"`
	}
	if _, err := c.do(ctx, "POST", queuePath(name, "clear"), nil, &out); err != nil {
		return 0, err
	}
	return out.Cleared, nil
}

// DeleteQueue deletes the queue, its settings and all its jobs, and
// returns how many jobs.
func (c *Client) DeleteQueue(ctx context.Context, name string) (int, error) {
	var out struct {
		JobsDeleted int `json:"jobs_deleted"`
	}
	if _, err := c.do(ctx, "DELETE", queuePath(name, "")+"?confirm=true", nil, &out); err != nil {
		return 0, err
	}
	return out.JobsDeleted, nil
}

// SetQueueConcurrency limits how many of the queue's jobs are active at
// once across all workers (1 = one at a time).
func (c *Client) SetQueueConcurrency(ctx context.Context, name string, max int64) (*Queue, error) {
	return c.queueCall(ctx, "POST", queuePath(name, "concurrency"), map[string]int64{"max": max})
}

// RemoveQueueConcurrency removes the queue's concurrency limit.
func (c *Client) RemoveQueueConcurrency(ctx context.Context, name string) (*Queue, error) {
	return c.queueCall(ctx, "DELETE", queuePath(name, "concurrency"), nil)
}

// SetQueueThrottle lets at most rate fetches from the queue happen in any
// window of period.
func (c *Client) SetQueueThrottle(ctx context.Context, name string, rate int64, period time.Duration) (*Queue, error) {
	in := map[string]any{"rate": rate, "period": formatDuration(period)}
	return c.queueCall(ctx, "POST", queuePath(name, "throttle"), in)
}

// RemoveQueueThrottle removes the queue's throttle.
func (c *Client) RemoveQueueThrottle(ctx context.Context, name string) (*Queue, error) {
	return c.queueCall(ctx, "DELETE", queuePath(name, "throttle"), nil)
}

// SetQueueDefaults replaces the queue's job defaults.
func (c *Client) SetQueueDefaults(ctx context.Context, name string, d QueueDefaults) (*Queue, error) {
	return c.queueCall(ctx, "POST", queuePath(name, "defaults"), d)
}

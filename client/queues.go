package client

import (
	"context"
	"net/url"
	"strconv"
	"time"

	"github.com/jobbie/jobbie/wire"
)

// Queue is a queue of the namespace with its counts and settings.
// Throughput is completed jobs per minute over the last five minutes;
// OldestPendingAge is how long, in seconds, the oldest pending job has
// waited. Its settings are what PutQueue sets (QueueSpecOf reads them as
// a QueueSpec); Defaults is never nil from the server. Schema is the
// payload schema in canonical form (JSON null without one) and
// SchemaVersion its version (0: none).
type Queue = wire.Queue

// QueueCounts are a queue's jobs per state.
type QueueCounts = wire.QueueCounts

// QueueThrottle is a queue's rate limit as the server shows it.
type QueueThrottle = wire.Throttle

// QueueDefaults are what a queue's jobs get for fields their producer left
// out (and a fetch without lease_duration); nil fields have no queue
// default. Durations are JSON: write them with wire.Duration, read them
// with wire.ParseDuration (the server writes wire.FormatDuration's form).
type QueueDefaults = wire.QueueDefaults

// DrainResult is the answer to a drain.
type DrainResult = wire.DrainResponse

func queuePath(name string, action string) string {
	p := "/api/v1/queues/" + url.PathEscape(name)
	if action != "" {
		p += "/" + action
	}
	return p
}

// ListQueues lists the queues of the namespace.
func (c *Client) ListQueues(ctx context.Context) ([]Queue, error) {
	var out wire.QueueList
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
	var out wire.ClearResponse
	if _, err := c.do(ctx, "POST", queuePath(name, "clear"), nil, &out); err != nil {
		return 0, err
	}
	return out.Cleared, nil
}

// DeleteQueue deletes the queue, its settings and all its jobs, and
// returns how many jobs.
func (c *Client) DeleteQueue(ctx context.Context, name string) (int, error) {
	var out wire.QueueDeleteResponse
	if _, err := c.do(ctx, "DELETE", queuePath(name, "")+"?confirm=true", nil, &out); err != nil {
		return 0, err
	}
	return out.JobsDeleted, nil
}

// SetQueueConcurrency limits how many of the queue's jobs are active at
// once across all workers (1 = one at a time).
func (c *Client) SetQueueConcurrency(ctx context.Context, name string, max int64) (*Queue, error) {
	return c.queueCall(ctx, "POST", queuePath(name, "concurrency"), wire.ConcurrencyRequest{Max: strconv.AppendInt(nil, max, 10)})
}

// RemoveQueueConcurrency removes the queue's concurrency limit.
func (c *Client) RemoveQueueConcurrency(ctx context.Context, name string) (*Queue, error) {
	return c.queueCall(ctx, "DELETE", queuePath(name, "concurrency"), nil)
}

// SetQueueThrottle lets at most rate fetches from the queue happen in any
// window of period.
func (c *Client) SetQueueThrottle(ctx context.Context, name string, rate int64, period time.Duration) (*Queue, error) {
	in := wire.ThrottleRequest{Rate: &rate, Period: wire.Duration(period)}
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

package client

import (
	"context"
	"net/url"
	"time"

	"github.com/jobbie/jobbie/wire"
)

// A queue's history and what an autoscaler reads of it
// (docs/api/queues.md, "History" and "Autoscaling"); both need
// queue.read.
type (
	// QueueStats is a queue's history over [From, To), one bucket per
	// step, oldest first, every step present.
	QueueStats = wire.QueueStats
	// QueueStatsBucket is one step: what happened in it, the last depth
	// sampled in it and its attempts' processing time percentiles.
	QueueStatsBucket = wire.QueueStatsBucket
	// ProcessingTime gives an attempt duration's count and percentiles in
	// milliseconds.
	ProcessingTime = wire.ProcessingTime
	// QueueScale is the queue's live backlog, oldest pending age, jobs in
	// flight and demand (never 0 while a job is in flight or, unless the
	// queue is paused, pending).
	QueueScale = wire.QueueScale
)

// Steps of a queue's history (StatsQuery.Step): minute buckets, kept
// wire.StatsMinuteRetention, or hour buckets, kept wire.StatsHourRetention.
const (
	StatsStepMinute = wire.StatsStepMinute
	StatsStepHour   = wire.StatsStepHour
)

// StatsQuery narrows GET /api/v1/queues/{name}/stats. Zero fields take
// the server's defaults: Step 1m, To now, From an hour (1m) or a day (1h)
// before To. The server widens the range to whole steps; a range longer
// than the step keeps is a 400 naming the field.
type StatsQuery struct {
	From, To time.Time
	Step     string // StatsStepMinute or StatsStepHour
}

func (q StatsQuery) encode() string {
	v := url.Values{}
	if !q.From.IsZero() {
		v.Set("from", q.From.UTC().Format(time.RFC3339Nano))
	}
	if !q.To.IsZero() {
		v.Set("to", q.To.UTC().Format(time.RFC3339Nano))
	}
	if q.Step != "" {
		v.Set("step", q.Step)
	}
	if len(v) == 0 {
		return ""
	}
	return "?" + v.Encode()
}

// QueueStats reads the queue's history. A queue the key cannot see, or
// one that does not exist, is a 404.
func (c *Client) QueueStats(ctx context.Context, name string, q StatsQuery) (*QueueStats, error) {
	var out QueueStats
	if _, err := c.do(ctx, "GET", queuePath(name, "stats")+q.encode(), nil, &out); err != nil {
		return nil, err
	}
	if out.Buckets == nil {
		out.Buckets = []QueueStatsBucket{}
	}
	return &out, nil
}

// QueueScale reads what an autoscaler sizes the queue's workers by, live.
func (c *Client) QueueScale(ctx context.Context, name string) (*QueueScale, error) {
	var out QueueScale
	if _, err := c.do(ctx, "GET", queuePath(name, "scale"), nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

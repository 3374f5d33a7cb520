package wire

import "time"

// Steps of a queue's history (GET /api/v1/queues/{name}/stats?step=), and
// how far back each is kept: the shard's minute and hour buckets.
const (
	StatsStepMinute = "1m"
	StatsStepHour   = "1h"

	StatsMinuteRetention = 48 * time.Hour
	StatsHourRetention   = 30 * 24 * time.Hour
)

// QueueStatsQuery is a checked history query: [From, To) in whole UTC
// buckets of Step.
type QueueStatsQuery struct {
	From, To time.Time
	Step     string
}

// Unit is the length of one of q's buckets.
func (q QueueStatsQuery) Unit() time.Duration {
	if q.Step == StatsStepHour {
		return time.Hour
	}
	return time.Minute
}

// ParseQueueStatsQuery reads a history query at now: RFC 3339 from and
// to, step 1m or 1h. Defaults: step 1m, to now, from an hour (1m) or a day
// (1h) before to. from is moved back to its bucket's start and to forward
// to its bucket's end. A bad value, to not after from, or a span longer
// than the step's retention is a *FieldError naming the field.
func ParseQueueStatsQuery(now time.Time, from, to, step string) (QueueStatsQuery, error) {
	q := QueueStatsQuery{Step: step}
	keep, def := StatsMinuteRetention, time.Hour
	switch step {
	case "", StatsStepMinute:
		q.Step = StatsStepMinute
	case StatsStepHour:
		keep, def = StatsHourRetention, 24*time.Hour
	default:
		return QueueStatsQuery{}, fieldErr("step", "step must be 1m or 1h, not %q", step)
	}
	unit := q.Unit()
	rawTo, err := parseUsageTime("to", to, now)
	if err != nil {
		return QueueStatsQuery{}, err
	}
	q.To = ceilTo(rawTo, unit)
	rawFrom, err := parseUsageTime("from", from, q.To.Add(-def))
	if err != nil {
		return QueueStatsQuery{}, err
	}
	if !rawTo.After(rawFrom) {
		return QueueStatsQuery{}, fieldErr("to", "to must be after from")
	}
	q.From = rawFrom.Truncate(unit)
	if span := q.To.Sub(q.From); span > keep {
		return QueueStatsQuery{}, fieldErr("from", "from and to span %s, over the %s that step %s keeps: narrow the range or use step 1h",
			span, keep, q.Step)
	}
	return q, nil
}

// QueueStats is a queue's history over [from, to): one bucket per step,
// every step present (a step without activity or samples is zeros).
type QueueStats struct {
	Queue   string             `json:"queue"`
	Step    string             `json:"step"`
	From    time.Time          `json:"from"`
	To      time.Time          `json:"to"`
	Buckets []QueueStatsBucket `json:"buckets"`
}

// QueueStatsBucket is one step of a queue's history. The counts are of
// what happened in it; pending and oldest_pending_age are the last sample
// the shard leader took in it (taken every few seconds while a queue has
// jobs pending or active); processing times are of the attempts that
// ended by an ack or a fail in it, approximate (within 12.5%).
type QueueStatsBucket struct {
	Start            time.Time      `json:"start"`
	Enqueued         int64          `json:"enqueued"`
	Completed        int64          `json:"completed"`
	Failed           int64          `json:"failed"`
	Dead             int64          `json:"dead"`
	Pending          int64          `json:"pending"`
	OldestPendingAge float64        `json:"oldest_pending_age"` // seconds
	ProcessingTime   ProcessingTime `json:"processing_time"`
}

// ProcessingTime gives percentiles of attempts' durations, in
// milliseconds (0 when no attempt ended).
type ProcessingTime struct {
	Count int64   `json:"count"`
	P50   float64 `json:"p50_ms"`
	P95   float64 `json:"p95_ms"`
	P99   float64 `json:"p99_ms"`
}

// QueueScale is what an autoscaler reads of a queue, live: the jobs
// waiting (pending), the age of the oldest, the jobs being processed
// (active), and Demand: the jobs in flight and the pending jobs a worker
// could take now. It is never 0 while a job is in flight, so a scaler
// that scales to zero on it never stops a worker that holds a job. A
// paused queue's pending jobs are no demand (no worker would get them),
// and a queue with a concurrency limit counts only as many as the limit
// leaves room for; LimitedBy says which held pending jobs out, absent
// when none did.
type QueueScale struct {
	Queue            string  `json:"queue"`
	Backlog          int64   `json:"backlog"`
	OldestPendingAge float64 `json:"oldest_pending_age"` // seconds
	InFlight         int64   `json:"in_flight"`
	Demand           int64   `json:"demand"`
	Paused           bool    `json:"paused"`
	LimitedBy        string  `json:"limited_by,omitempty"` // what held pending jobs out of demand (absent: nothing)
}

// What held a queue's pending jobs out of its demand (QueueScale.LimitedBy).
const (
	// ScaleLimitedPaused: the queue is paused (or draining), so no pending
	// job is demand.
	ScaleLimitedPaused = "paused"
	// ScaleLimitedConcurrency: the queue's concurrency limit leaves room
	// for fewer jobs than are pending.
	ScaleLimitedConcurrency = "concurrency"
)

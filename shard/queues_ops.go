package shard

import (
	"context"
	"encoding/json"
	"time"

	"github.com/cockroachdb/pebble"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/shard/job"
	"github.com/jobbie/jobbie/shard/keys"
	"github.com/jobbie/jobbie/tenancy"
)

// Bounds of queue settings.
const (
	maxConcurrency   = 1_000_000
	maxThrottleRate  = 1_000_000
	minThrottlePer   = time.Second
	maxThrottlePer   = 7 * 24 * time.Hour
	maxRetention     = 10 * 365 * 24 * time.Hour
	maxQueuesListed  = 10_000
	queueStepsPerReq = 1_000_000 // steps of one clear or delete, a guard against a loop
)

// queueObserver wakes a parked fetch of a concurrency-limited queue when
// one of its jobs leaves the active state and so frees a slot.
func (e *Engine) queueObserver(tx *replica.Tx, ns string, j *job.Job, from job.State) {
	if from != job.Active {
		return
	}
	q := e.queues.get(tx, ns, j.Queue)
	if q.MaxActive == 0 || q.Paused {
		return
	}
	queue := j.Queue
	tx.AfterCommit(func() { e.waiters.notify(ns, queue, 1) })
}

// queueReady reads local state: may queue hand out a job now? When only
// its throttle holds it back, the queue's waiters are woken when the
// window frees a slot. A stale "no" is safe for the same reason as in
// anyPending: whatever makes the queue ready again wakes its waiters.
func (e *Engine) queueReady(ns, queue string) bool {
	ok, retryAt := e.queues.ready(e.node.DB(), ns, queue, time.Now().UnixNano())
	if !ok && retryAt > 0 {
		e.wakeAt(ns, queue, retryAt)
	}
	return ok
}

// queueRetention is the retention of queue's finished jobs, or 0 when the
// queue sets none (the namespace default applies).
func (e *Engine) queueRetention(r pebble.Reader, ns, queue string) time.Duration {
	c := e.queues
	c.mu.RLock()
	q, ok := c.recs[headKey(ns, queue)]
	var d time.Duration
	if ok && q.Defaults != nil {
		d = time.Duration(q.Defaults.Retention)
	}
	c.mu.RUnlock()
	if ok {
		return d
	}
	if q, _ = getQueue(r, ns, queue); q.Defaults != nil {
		d = time.Duration(q.Defaults.Retention)
	}
	return d
}

// Fields of an enqueue the producer left out, which take the queue's
// defaults at apply time (a bit set per job in enqueueCmd.Defaulted).
const (
	defMaxRetries uint8 = 1 << iota
	defBackoff
	defBaseDelay
	defMaxDelay
)

// defaultedFields returns the bits of the fields r leaves out.
func defaultedFields(r *EnqueueRequest) uint8 {
	var m uint8
	if r.MaxRetries == nil {
		m |= defMaxRetries
	}
	if r.RetryBackoff == "" {
		m |= defBackoff
	}
	if isAbsent(r.RetryBaseDelay) {
		m |= defBaseDelay
	}
	if isAbsent(r.RetryMaxDelay) {
		m |= defMaxDelay
	}
	return m
}

func isAbsent(raw json.RawMessage) bool {
	s := string(raw)
	return s == "" || s == "null"
}

// applyJobDefaults gives j its queue's defaults for the fields in mask.
func (e *Engine) applyJobDefaults(tx *replica.Tx, ns string, j *job.Job, mask uint8) {
	if mask == 0 {
		return
	}
	d := e.queues.get(tx, ns, j.Queue).Defaults
	if d == nil {
		return
	}
	if mask&defMaxRetries != 0 && d.MaxRetries != nil {
		j.MaxRetries = *d.MaxRetries
	}
	if mask&defBackoff != 0 && d.Backoff != "" {
		j.Backoff = d.Backoff
	}
	if mask&defBaseDelay != 0 && d.BaseDelay > 0 {
		j.BaseDelay = d.BaseDelay
	}
	if mask&defMaxDelay != 0 && d.MaxDelay > 0 {
		j.MaxDelay = d.MaxDelay
	}
	if j.MaxDelay < j.BaseDelay {
		j.MaxDelay = j.BaseDelay
	}
}

func queueOK(ns, queue string) error {
	if err := namespaceOK(ns); err != nil {
		return err
	}
	if err := tenancy.ValidateQueue(queue); err != nil {
		return apierr.Field("queue", "%v", err)
	}
	return nil
}

// ListQueues reads every queue of the namespace from local state.
func (e *Engine) ListQueues(ns string) ([]*QueueView, error) {
	if err := namespaceOK(ns); err != nil {
		return nil, err
	}
	db := e.node.DB()
	p := keys.QueuePrefix(ns)
	it, err := db.NewIter(&pebble.IterOptions{LowerBound: p, UpperBound: keys.PrefixEnd(p)})
	if err != nil {
		return nil, err
	}
	var names []string
	for ok := it.First(); ok && len(names) < maxQueuesListed; ok = it.Next() {
		names = append(names, string(it.Key()[len(p):]))
	}
	if err := it.Close(); err != nil {
		return nil, err
	}
	now := time.Now().UnixNano()
	out := make([]*QueueView, 0, len(names))
	for _, n := range names {
		if q, ok := e.queues.read(db, ns, n); ok {
			out = append(out, e.queueView(db, ns, q, now))
		}
	}
	return out, nil
}

// GetQueue reads one queue from local state.
func (e *Engine) GetQueue(ns, queue string) (*QueueView, error) {
	if err := queueOK(ns, queue); err != nil {
		return nil, err
	}
	q, ok := e.queues.read(e.node.DB(), ns, queue)
	if !ok {
		return nil, queueNotFound(queue)
	}
	return e.queueView(e.node.DB(), ns, q, time.Now().UnixNano()), nil
}

// oldestPending is the creation time of queue's oldest pending job (0 if
// none): the first key of each priority in the pending index.
func oldestPending(r pebble.Reader, ns, queue string) int64 {
	var oldest int64
	for _, p := range []job.Priority{job.Critical, job.High, job.Normal} {
		lower := append(keys.PendingQueue(ns, queue), uint8(p))
		it, err := r.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: keys.PrefixEnd(lower)})
		if err != nil {
			continue
		}
		if it.First() {
			if _, at, err := keys.PendingOrder(ns, queue, it.Key()); err == nil && (oldest == 0 || at < oldest) {
				oldest = at
			}
		}
		_ = it.Close()
	}
	return oldest
}

// queueSet proposes a queue setting and returns the queue as it now is.
func (e *Engine) queueSet(ctx context.Context, ns, queue string, t replica.CommandType, c any) (*QueueView, error) {
	if err := queueOK(ns, queue); err != nil {
		return nil, err
	}
	if _, err := e.propose(ctx, t, c); err != nil {
		return nil, err
	}
	return e.GetQueue(ns, queue)
}

// PauseQueue stops fetches from the queue; enqueues go on.
func (e *Engine) PauseQueue(ctx context.Context, ns, queue string) (*QueueView, error) {
	return e.queueSet(ctx, ns, queue, cmdQueuePause, &queueCmd{NS: ns, Queue: queue})
}

// ResumeQueue lets fetches take jobs from the queue again.
func (e *Engine) ResumeQueue(ctx context.Context, ns, queue string) (*QueueView, error) {
	return e.queueSet(ctx, ns, queue, cmdQueueResume, &queueCmd{NS: ns, Queue: queue})
}

// DrainQueue pauses the queue and returns how many of its jobs are active.
func (e *Engine) DrainQueue(ctx context.Context, ns, queue string) (int64, error) {
	if err := queueOK(ns, queue); err != nil {
		return 0, err
	}
	res, err := e.propose(ctx, cmdQueueDrain, &queueCmd{NS: ns, Queue: queue})
	if err != nil {
		return 0, err
	}
	return res.(int64), nil
}

// SetConcurrency limits (max >= 1) or unlimits (max 0) the queue's active jobs.
func (e *Engine) SetConcurrency(ctx context.Context, ns, queue string, max int64) (*QueueView, error) {
	if max < 0 || max > maxConcurrency {
		return nil, apierr.Field("max", "max must be between 1 and %d, or null to remove the limit", maxConcurrency)
	}
	return e.queueSet(ctx, ns, queue, cmdQueueConcurrency, &queueLimitCmd{NS: ns, Queue: queue, Max: max})
}

// SetThrottle sets (rate >= 1) or removes (rate 0) the queue's throttle.
func (e *Engine) SetThrottle(ctx context.Context, ns, queue string, rate int64, period time.Duration) (*QueueView, error) {
	return e.queueSet(ctx, ns, queue, cmdQueueThrottle, &queueThrottleCmd{NS: ns, Queue: queue, Rate: rate, Period: int64(period)})
}

// SetQueueDefaults replaces the defaults of the queue's new jobs.
func (e *Engine) SetQueueDefaults(ctx context.Context, ns, queue string, d queueDefaults) (*QueueView, error) {
	return e.queueSet(ctx, ns, queue, cmdQueueDefaults, &queueDefaultsCmd{NS: ns, Queue: queue, Defaults: d})
}

// ClearQueue deletes the queue's pending and scheduled jobs and returns
// how many, in as many bounded steps as it takes.
func (e *Engine) ClearQueue(ctx context.Context, ns, queue string) (int, error) {
	return e.queueSteps(ctx, ns, queue, cmdQueueClear)
}

// DeleteQueue deletes the queue, its settings and all its jobs, and
// returns how many jobs.
func (e *Engine) DeleteQueue(ctx context.Context, ns, queue string) (int, error) {
	return e.queueSteps(ctx, ns, queue, cmdQueueDelete)
}

func (e *Engine) queueSteps(ctx context.Context, ns, queue string, t replica.CommandType) (int, error) {
	if err := queueOK(ns, queue); err != nil {
		return 0, err
	}
	c := &queueSweepCmd{NS: ns, Queue: queue}
	total := 0
	for i := 0; i < queueStepsPerReq; i++ {
		res, err := e.propose(ctx, t, c)
		if err != nil {
			if total > 0 && apierr.CodeOf(err) == apierr.NotFound {
				return total, nil
			}
			return total, err
		}
		st := res.(*queueStep)
		total += st.Removed
		if st.Next == nil {
			return total, nil
		}
		c.Phase, c.After = st.Phase, st.Next
	}
	return total, nil
}

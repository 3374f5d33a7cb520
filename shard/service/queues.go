package service

import (
	"bytes"
	"context"
	"encoding/json"
	"time"

	"github.com/cockroachdb/pebble"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/shard/engine"
	"github.com/jobbie/jobbie/shard/job"
	"github.com/jobbie/jobbie/shard/keys"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
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

// CheckQueue validates a namespace and a queue name (400 naming them).
func CheckQueue(ns, queue string) error {
	if err := namespaceOK(ns); err != nil {
		return err
	}
	if err := tenancy.ValidateQueue(queue); err != nil {
		return apierr.Field("queue", "%v", err)
	}
	return nil
}

func queueNotFound(queue string) error {
	return apierr.New(apierr.NotFound, "queue %q not found", queue)
}

// ListQueues reads the queues of the namespace in sc from local state.
func (s *Service) ListQueues(ns string, sc tenancy.QueueScope) ([]wire.Queue, error) {
	if err := namespaceOK(ns); err != nil {
		return nil, err
	}
	db := s.node.DB()
	names, err := queueNames(db, ns, sc, maxQueuesListed)
	if err != nil {
		return nil, err
	}
	now := s.now()
	out := make([]wire.Queue, 0, len(names))
	for _, n := range names {
		if q, ok := s.eng.Queue(db, ns, n); ok {
			out = append(out, queueView(db, ns, q, now))
		}
	}
	return out, nil
}

// queueNames lists the names of ns's queues in sc, in name order, at most
// max of them (-1: all).
func queueNames(r pebble.Reader, ns string, sc tenancy.QueueScope, max int) ([]string, error) {
	p := keys.QueuePrefix(ns)
	it, err := r.NewIter(&pebble.IterOptions{LowerBound: p, UpperBound: keys.PrefixEnd(p)})
	if err != nil {
		return nil, err
	}
	var names []string
	for ok := it.First(); ok && len(names) != max; ok = it.Next() {
		if n := string(it.Key()[len(p):]); sc.Allows(n) {
			names = append(names, n)
		}
	}
	return names, it.Close()
}

// GetQueue reads one queue from local state.
func (s *Service) GetQueue(ns, queue string) (*wire.Queue, error) {
	if err := CheckQueue(ns, queue); err != nil {
		return nil, err
	}
	q, ok := s.eng.Queue(s.node.DB(), ns, queue)
	if !ok {
		return nil, queueNotFound(queue)
	}
	v := queueView(s.node.DB(), ns, q, s.now())
	return &v, nil
}

func queueView(r pebble.Reader, ns string, q *engine.QueueRecord, now int64) wire.Queue {
	v := wire.Queue{
		Name: q.Name, Description: q.Description, Throughput: q.Throughput(now), Paused: q.Paused, Draining: q.Draining,
		Counts: wire.QueueCounts{Pending: q.Count(job.Pending), Scheduled: q.Count(job.Scheduled), Active: q.Count(job.Active),
			Retrying: q.Count(job.Retrying), Completed: q.Count(job.Completed), Dead: q.Count(job.Dead), Cancelled: q.Count(job.Cancelled),
			Held: q.Count(job.Held)},
	}
	v.ThroughputPerMinute = q.ThroughputSeries(now)
	v.Drained = q.Draining && v.Counts.Active == 0
	if v.Counts.Pending > 0 {
		if at := oldestPending(r, ns, q.Name); at > 0 && now > at {
			v.OldestPendingAge = time.Duration(now - at).Seconds()
		}
	}
	if q.MaxActive > 0 {
		m := q.MaxActive
		v.Concurrency = &m
	}
	if q.KeyMax > 0 {
		v.KeyConcurrency = &wire.KeyConcurrency{Max: q.KeyMax}
	}
	if t := q.Throttle; t != nil {
		v.Throttle = &wire.Throttle{Rate: t.Rate, Period: wire.FormatDuration(time.Duration(t.Period))}
	}
	v.Defaults = defaultsView(q.Defaults)
	v.Push = pushView(q.Push)
	v.Schema = json.RawMessage("null")
	if q.Schema != 0 {
		if raw, ver, err := engine.QueueSchema(r, ns, q.Name); err == nil && raw != nil {
			v.Schema, v.SchemaVersion = raw, int64(ver)
		}
	}
	return v
}

// defaultsView is a queue's defaults as the API shows them: every field,
// null where the queue sets none.
func defaultsView(d *engine.QueueDefaults) *wire.QueueDefaults {
	if d == nil {
		d = &engine.QueueDefaults{}
	}
	v := &wire.QueueDefaults{RetryBaseDelay: durJSON(d.BaseDelay), RetryMaxDelay: durJSON(d.MaxDelay),
		LeaseDuration: durJSON(d.LeaseNs), ExpireAfter: durJSON(d.ExpireAfter), Retention: durJSON(d.Retention)}
	if d.MaxRetries != nil {
		n := *d.MaxRetries
		v.MaxRetries = &n
	}
	if d.Backoff != "" {
		b := d.Backoff
		v.RetryBackoff = &b
	}
	return v
}

func durJSON(ns int64) json.RawMessage {
	if ns == 0 {
		return json.RawMessage("null")
	}
	return wire.Duration(time.Duration(ns))
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
	for _, g := range keyedGroups(r, ns, queue) {
		it, err := r.NewIter(&pebble.IterOptions{LowerBound: g, UpperBound: keys.PrefixEnd(g)})
		if err != nil {
			continue
		}
		if it.First() {
			if at, _, err := keys.CreatedID(it.Key()); err == nil && (oldest == 0 || at < oldest) {
				oldest = at
			}
		}
		_ = it.Close()
	}
	return oldest
}

// keyedGroups lists the prefixes of queue's groups of keyed pending jobs
// (each in creation order), read from the group keys.
func keyedGroups(r pebble.Reader, ns, queue string) [][]byte {
	gq := keys.KeyedQueue(ns, keys.KindKeyedGroup, queue)
	it, err := r.NewIter(&pebble.IterOptions{LowerBound: gq, UpperBound: keys.PrefixEnd(gq)})
	if err != nil {
		return nil
	}
	defer func() { _ = it.Close() }()
	var out [][]byte
	for ok := it.First(); ok; ok = it.Next() {
		if p, f, c, err := keys.ParseKeyedGroup(ns, queue, it.Key()); err == nil {
			out = append(out, keys.KeyedPrefix(ns, queue, p, f, c))
		}
	}
	return out
}

// queueSet proposes a queue setting and returns the queue as it now is.
func queueSet[C any](ctx context.Context, s *Service, ns, queue string, op replica.Op[C, replica.None], c *C) (*wire.Queue, error) {
	if err := CheckQueue(ns, queue); err != nil {
		return nil, err
	}
	if _, err := op.Propose(ctx, s.node, c); err != nil {
		return nil, err
	}
	return s.GetQueue(ns, queue)
}

// PauseQueue stops fetches from the queue; enqueues go on.
func (s *Service) PauseQueue(ctx context.Context, ns, queue string) (*wire.Queue, error) {
	return queueSet(ctx, s, ns, queue, engine.QueuePause, &engine.QueueCmd{NS: ns, Queue: queue})
}

// ResumeQueue lets fetches take jobs from the queue again.
func (s *Service) ResumeQueue(ctx context.Context, ns, queue string) (*wire.Queue, error) {
	return queueSet(ctx, s, ns, queue, engine.QueueResume, &engine.QueueCmd{NS: ns, Queue: queue})
}

// DrainQueue pauses the queue and reports how many of its jobs are active.
func (s *Service) DrainQueue(ctx context.Context, ns, queue string) (*wire.DrainResponse, error) {
	if err := CheckQueue(ns, queue); err != nil {
		return nil, err
	}
	active, err := engine.QueueDrain.Propose(ctx, s.node, &engine.QueueCmd{NS: ns, Queue: queue})
	if err != nil {
		return nil, err
	}
	return &wire.DrainResponse{Queue: queue, Paused: true, Draining: true, Active: active, Drained: active == 0}, nil
}

// SetConcurrency limits the queue's active jobs to r.Max, or removes the
// limit when r.Max is null.
func (s *Service) SetConcurrency(ctx context.Context, ns, queue string, r *wire.ConcurrencyRequest) (*wire.Queue, error) {
	var max int64
	if raw := bytes.TrimSpace(r.Max); len(raw) > 0 && !bytes.Equal(raw, []byte("null")) {
		if err := json.Unmarshal(raw, &max); err != nil || max < 1 {
			return nil, apierr.Field("max", "max must be an integer of at least 1 (1 = one job at a time), or null to remove the limit")
		}
	} else if len(raw) == 0 {
		return nil, apierr.Field("max", "max is required: an integer of at least 1, or null to remove the limit")
	}
	return s.setConcurrency(ctx, ns, queue, max)
}

// RemoveConcurrency removes the queue's limit of active jobs.
func (s *Service) RemoveConcurrency(ctx context.Context, ns, queue string) (*wire.Queue, error) {
	return s.setConcurrency(ctx, ns, queue, 0)
}

func (s *Service) setConcurrency(ctx context.Context, ns, queue string, max int64) (*wire.Queue, error) {
	if max < 0 || max > maxConcurrency {
		return nil, apierr.Field("max", "max must be between 1 and %d, or null to remove the limit", maxConcurrency)
	}
	return queueSet(ctx, s, ns, queue, engine.QueueConcurrency, &engine.QueueLimitCmd{NS: ns, Queue: queue, Max: max})
}

// SetThrottle lets at most r.Rate fetches of the queue happen in any
// window of r.Period.
func (s *Service) SetThrottle(ctx context.Context, ns, queue string, r *wire.ThrottleRequest) (*wire.Queue, error) {
	if r.Rate == nil || *r.Rate < 1 || *r.Rate > maxThrottleRate {
		return nil, apierr.Field("rate", "rate must be an integer between 1 and %d", maxThrottleRate)
	}
	period, ok, err := parseSpan("period", r.Period, minThrottlePer, maxThrottlePer)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, apierr.Field("period", "period is required: a duration like \"1m\" between 1s and 7 days")
	}
	return queueSet(ctx, s, ns, queue, engine.QueueThrottle, &engine.QueueThrottleCmd{NS: ns, Queue: queue, Rate: *r.Rate, Period: int64(period)})
}

// RemoveThrottle removes the queue's throttle.
func (s *Service) RemoveThrottle(ctx context.Context, ns, queue string) (*wire.Queue, error) {
	return queueSet(ctx, s, ns, queue, engine.QueueThrottle, &engine.QueueThrottleCmd{NS: ns, Queue: queue})
}

// SetQueueDefaults replaces the defaults of the queue's new jobs.
func (s *Service) SetQueueDefaults(ctx context.Context, ns, queue string, r *wire.QueueDefaults) (*wire.Queue, error) {
	d, err := toDefaults(r, "")
	if err != nil {
		return nil, err
	}
	return queueSet(ctx, s, ns, queue, engine.QueueDefaultsSet, &engine.QueueDefaultsCmd{NS: ns, Queue: queue, Defaults: d})
}

// toDefaults validates the defaults a caller sent; errors name each field
// after prefix ("defaults." in a PUT of the whole queue).
func toDefaults(d *wire.QueueDefaults, prefix string) (engine.QueueDefaults, error) {
	var out engine.QueueDefaults
	if d.MaxRetries != nil {
		if *d.MaxRetries < 0 || *d.MaxRetries > wire.MaxMaxRetries {
			return out, apierr.Field(prefix+"max_retries", "max_retries must be between 0 and %d", wire.MaxMaxRetries)
		}
		n := *d.MaxRetries
		out.MaxRetries = &n
	}
	if d.RetryBackoff != nil {
		if err := job.ValidBackoff(*d.RetryBackoff); err != nil {
			return out, apierr.Field(prefix+"retry_backoff", "%v", err)
		}
		out.Backoff = *d.RetryBackoff
	}
	for _, f := range []struct {
		name     string
		raw      json.RawMessage
		dst      *int64
		min, max time.Duration
	}{
		{"retry_base_delay", d.RetryBaseDelay, &out.BaseDelay, 1, wire.MaxDelay},
		{"retry_max_delay", d.RetryMaxDelay, &out.MaxDelay, 1, wire.MaxDelay},
		{"lease_duration", d.LeaseDuration, &out.LeaseNs, wire.MinLease, wire.MaxLease},
		{"expire_after", d.ExpireAfter, &out.ExpireAfter, time.Second, wire.MaxAhead},
		{"retention", d.Retention, &out.Retention, time.Minute, maxRetention},
	} {
		v, ok, err := parseSpan(prefix+f.name, f.raw, f.min, f.max)
		if err != nil {
			return out, err
		}
		if ok {
			*f.dst = int64(v)
		}
	}
	if out.BaseDelay > 0 && out.MaxDelay > 0 && out.MaxDelay < out.BaseDelay {
		return out, apierr.Field(prefix+"retry_max_delay", "retry_max_delay must not be less than retry_base_delay")
	}
	return out, nil
}

// parseSpan parses a duration ("5s" or seconds) between min and max.
func parseSpan(field string, raw json.RawMessage, min, max time.Duration) (time.Duration, bool, error) {
	d, ok, err := wire.ParseDuration(raw)
	switch {
	case err != nil:
		return 0, false, apierr.Field(field, "%s must be a duration like \"30s\" or a number of seconds", field)
	case ok && (d < min || d > max):
		return 0, false, apierr.Field(field, "%s must be between %s and %s", field, wire.FormatDuration(min), wire.FormatDuration(max))
	}
	return d, ok, nil
}

// ClearQueue deletes the queue's pending, scheduled and retrying jobs and
// returns how many, in as many bounded steps as it takes. Active jobs
// stay; what waits on a deleted job is settled as if it had failed.
func (s *Service) ClearQueue(ctx context.Context, ns, queue string) (int, error) {
	return s.queueSteps(ctx, ns, queue, engine.QueueClearAll)
}

// DeleteQueue deletes the queue, its settings and all its jobs, and
// returns how many jobs; what waits on a deleted job is settled as if it
// had failed.
func (s *Service) DeleteQueue(ctx context.Context, ns, queue string) (int, error) {
	return s.queueSteps(ctx, ns, queue, engine.QueueDeleteSettle)
}

func (s *Service) queueSteps(ctx context.Context, ns, queue string, op replica.Op[engine.QueueSweepCmd, *engine.QueueStep]) (int, error) {
	if err := CheckQueue(ns, queue); err != nil {
		return 0, err
	}
	c := &engine.QueueSweepCmd{NS: ns, Queue: queue}
	total := 0
	for i := 0; i < queueStepsPerReq; i++ {
		st, err := op.Propose(ctx, s.node, c)
		if err != nil {
			if total > 0 && apierr.CodeOf(err) == apierr.NotFound {
				return total, nil
			}
			return total, err
		}
		total += st.Removed
		if st.Next == nil {
			return total, nil
		}
		c.Phase, c.After = st.Phase, st.Next
	}
	return total, nil
}

package service

import (
	"time"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/shard/engine"
	"github.com/jobbie/jobbie/shard/job"
	"github.com/jobbie/jobbie/shard/keys"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// HistorySamples is what the leader's history loop records of ns's
// queues (engine.HistorySample): the pending depth and the oldest pending
// job of every queue with jobs pending or active. A queue with neither is
// left out, so an idle queue costs nothing; its history reads as zeros.
func (s *Service) HistorySamples(ns string) []engine.QueueSample {
	db := s.node.DB()
	names, err := queueNames(db, ns, tenancy.AllQueues(), -1)
	if err != nil {
		return nil
	}
	var out []engine.QueueSample
	for _, n := range names {
		q, ok := s.eng.Queue(db, ns, n)
		if !ok || q.Count(job.Pending)+q.Count(job.Active) == 0 {
			continue
		}
		smp := engine.QueueSample{Queue: n, Depth: q.Count(job.Pending)}
		if smp.Depth > 0 {
			smp.OldestAt = oldestPending(db, ns, n)
		}
		out = append(out, smp)
	}
	return out
}

// QueueStats reads queue's history over the query's range from the
// node's own store, one bucket per step.
func (s *Service) QueueStats(ns, queue, from, to, step string) (*wire.QueueStats, error) {
	if err := CheckQueue(ns, queue); err != nil {
		return nil, err
	}
	q, err := wire.ParseQueueStatsQuery(time.Unix(0, s.now()).UTC(), from, to, step)
	if err != nil {
		return nil, apierr.Invalid(err)
	}
	db := s.node.DB()
	if _, ok := s.eng.Queue(db, ns, queue); !ok {
		return nil, queueNotFound(queue)
	}
	res := keys.HistoryMinute
	if q.Step == wire.StatsStepHour {
		res = keys.HistoryHour
	}
	stored, err := engine.ReadHistory(db, ns, queue, res, q.From.UnixNano(), q.To.UnixNano())
	if err != nil {
		return nil, err
	}
	out := &wire.QueueStats{Queue: queue, Step: q.Step, From: q.From, To: q.To, Buckets: []wire.QueueStatsBucket{}}
	for at := q.From; at.Before(q.To); at = at.Add(q.Unit()) {
		b := wire.QueueStatsBucket{Start: at}
		if len(stored) > 0 && stored[0].Start == at.UnixNano() {
			b = statsBucket(stored[0])
			stored = stored[1:]
		}
		out.Buckets = append(out.Buckets, b)
	}
	return out, nil
}

func statsBucket(k *engine.Bucket) wire.QueueStatsBucket {
	b := wire.QueueStatsBucket{Start: time.Unix(0, k.Start).UTC(), Enqueued: k.Enqueued, Completed: k.Completed,
		Failed: k.Failed, Dead: k.Dead, Pending: k.Depth, OldestPendingAge: time.Duration(k.OldestAge).Seconds()}
	for _, n := range k.Hist {
		b.ProcessingTime.Count += n
	}
	if b.ProcessingTime.Count > 0 {
		b.ProcessingTime.P50, b.ProcessingTime.P95, b.ProcessingTime.P99 = k.Percentile(0.5)/1e3, k.Percentile(0.95)/1e3, k.Percentile(0.99)/1e3
	}
	return b
}

// QueueScale reads what an autoscaler needs of queue, live, from the
// node's own store.
func (s *Service) QueueScale(ns, queue string) (*wire.QueueScale, error) {
	if err := CheckQueue(ns, queue); err != nil {
		return nil, err
	}
	db := s.node.DB()
	q, ok := s.eng.Queue(db, ns, queue)
	if !ok {
		return nil, queueNotFound(queue)
	}
	v := &wire.QueueScale{Queue: queue, Backlog: q.Count(job.Pending), InFlight: q.Count(job.Active), Paused: q.Paused}
	v.Demand, v.LimitedBy = scaleDemand(q)
	if v.Backlog > 0 {
		if at, now := oldestPending(db, ns, queue), s.now(); at > 0 && now > at {
			v.OldestPendingAge = time.Duration(now - at).Seconds()
		}
	}
	return v, nil
}

// scaleDemand is the one rule of a queue's demand: its jobs in flight and
// the pending jobs workers could take now. A paused (or draining) queue
// hands out none, and one at its concurrency limit only as many as the
// limit has room for: more would be workers started to wait on it. Jobs
// in flight always count, so the last worker is never scaled away while
// it holds one. limitedBy says what held pending jobs out ("" nothing).
// A throttle and key_concurrency are not in it: a throttle lets every
// pending job out in time, at its rate, and a key's cap depends on which
// keys the pending jobs carry (docs/api/queues.md#autoscaling).
func scaleDemand(q *engine.QueueRecord) (demand int64, limitedBy string) {
	pending, active := q.Count(job.Pending), q.Count(job.Active)
	room := pending
	switch {
	case q.Paused:
		room, limitedBy = 0, wire.ScaleLimitedPaused
	case q.MaxActive > 0 && q.MaxActive-active < pending:
		room, limitedBy = max(0, q.MaxActive-active), wire.ScaleLimitedConcurrency
	}
	if room == pending {
		limitedBy = ""
	}
	return active + room, limitedBy
}

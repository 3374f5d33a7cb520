package shard

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/jobbie/jobbie/internal/obs"
	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/shard/job"
)

// Shard metrics. Jobs per state come from the queue counts every apply
// keeps; lifecycle events are counted by an observer as they are applied
// on this node.
var (
	jobsDesc = prometheus.NewDesc("jobbie_jobs", "Jobs per namespace, queue and state, as applied on this node.",
		[]string{"namespace", "queue", "state"}, nil)
	jobEvents = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "jobbie_job_events_total", Help: "Lifecycle events applied: enqueued, completed, failed, dead.",
	}, []string{"namespace", "queue", "event"})
	fetchSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "jobbie_fetch_seconds", Help: "Time a fetch took to return a job (long-poll wait included).",
		Buckets: prometheus.ExponentialBuckets(250e-6, 2, 18),
	}, []string{"namespace"})
	engines = &engineSet{live: map[*Engine]struct{}{}}
)

func init() { obs.Registry.MustRegister(engines, jobEvents, fetchSeconds) }

// engineSet collects the job counts of every open engine in the process.
type engineSet struct {
	mu   sync.Mutex
	live map[*Engine]struct{}
}

func (s *engineSet) add(e *Engine)    { s.mu.Lock(); s.live[e] = struct{}{}; s.mu.Unlock() }
func (s *engineSet) remove(e *Engine) { s.mu.Lock(); delete(s.live, e); s.mu.Unlock() }

func (s *engineSet) Describe(ch chan<- *prometheus.Desc) { ch <- jobsDesc }

func (s *engineSet) Collect(ch chan<- prometheus.Metric) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for e := range s.live {
		e.queues.mu.RLock()
		for k, q := range e.queues.recs {
			ns := k.ns
			for st := job.Scheduled; st <= job.MaxState; st++ {
				var n int64
				if int(st) < len(q.Counts) {
					n = q.Counts[st]
				}
				ch <- prometheus.MustNewConstMetric(jobsDesc, prometheus.GaugeValue, float64(n), ns, q.Name, st.String())
			}
		}
		e.queues.mu.RUnlock()
	}
}

// eventCounters caches the lifecycle counters by namespace, queue and
// event, so the metrics observer costs a map lookup (FSM goroutine only).
type eventCounters map[eventKey]prometheus.Counter

type eventKey struct{ ns, queue, event string }

func (m eventCounters) inc(ns, queue, event string) {
	k := eventKey{ns, queue, event}
	c, ok := m[k]
	if !ok {
		c = jobEvents.WithLabelValues(ns, queue, event)
		m[k] = c
	}
	c.Inc()
}

// countEvents returns the metrics observer.
func countEvents() moveObserver {
	m := eventCounters{}
	return func(_ *replica.Tx, ns string, j *job.Job, from job.State) {
		switch {
		case from == 0:
			m.inc(ns, j.Queue, "enqueued")
		case j.State == job.Completed:
			m.inc(ns, j.Queue, "completed")
		case from == job.Active && (j.State == job.Retrying || j.State == job.Dead || j.State == job.Pending):
			m.inc(ns, j.Queue, "failed") // a lost lease counts as a failed attempt
		}
		if j.State == job.Dead {
			m.inc(ns, j.Queue, "dead")
		}
	}
}

func observeFetch(ns string, start time.Time) {
	fetchSeconds.WithLabelValues(ns).Observe(time.Since(start).Seconds())
}

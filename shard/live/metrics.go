package live

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/jobbie/jobbie/internal/obs"
	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/shard/engine"
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
	engines = &engineSet{live: map[*engine.Engine]struct{}{}}
)

func init() { obs.Registry.MustRegister(engines, jobEvents, fetchSeconds) }

// engineSet collects the job counts of every open engine in the process.
type engineSet struct {
	mu   sync.Mutex
	live map[*engine.Engine]struct{}
}

// Track counts e's jobs in jobbie_jobs until Untrack.
func Track(e *engine.Engine) { engines.mu.Lock(); engines.live[e] = struct{}{}; engines.mu.Unlock() }

// Untrack stops counting e's jobs.
func Untrack(e *engine.Engine) { engines.mu.Lock(); delete(engines.live, e); engines.mu.Unlock() }

func (s *engineSet) Describe(ch chan<- *prometheus.Desc) { ch <- jobsDesc }

// Collect sums the engines' counts per namespace, queue and state. A
// process runs one node in production, so each series is that node's;
// where several run in one process (tests, a namespace moving between
// two shards of one process) a series they share is one sum rather than
// a duplicate, which would fail the whole scrape.
func (s *engineSet) Collect(ch chan<- prometheus.Metric) {
	type series struct{ ns, queue string }
	states := job.States()
	counts := map[series][]float64{}
	var order []series
	s.mu.Lock()
	for e := range s.live {
		e.Queues(func(ns string, q *engine.QueueRecord) {
			k := series{ns, q.Name}
			c, ok := counts[k]
			if !ok {
				c = make([]float64, len(states))
				counts[k] = c
				order = append(order, k)
			}
			for i, st := range states {
				c[i] += float64(q.Count(st))
			}
		})
	}
	s.mu.Unlock()
	for _, k := range order {
		for i, st := range states {
			ch <- prometheus.MustNewConstMetric(jobsDesc, prometheus.GaugeValue, counts[k][i], k.ns, k.queue, st.String())
		}
	}
}

// eventCounters caches the lifecycle counters by namespace, queue and
// event, so counting costs a map lookup (FSM goroutine only).
type eventCounters map[eventKey]prometheus.Counter

type eventKey struct{ ns, queue, event string }

func (m eventCounters) inc(k eventKey) {
	c, ok := m[k]
	if !ok {
		c = jobEvents.WithLabelValues(k.ns, k.queue, k.event)
		m[k] = c
	}
	c.Inc()
}

// CountEvents returns the engine observer that counts lifecycle events in
// jobbie_job_events_total once their entry commits.
func CountEvents() engine.Observer {
	m := eventCounters{}
	st := &stage[eventKey]{publish: func(ks []eventKey) {
		for _, k := range ks {
			m.inc(k)
		}
	}}
	return func(tx *replica.Tx, ns string, j *job.Job, from job.State) {
		switch {
		case from == job.New:
			st.add(tx, eventKey{ns, j.Queue, "enqueued"})
		case j.State == job.Completed:
			st.add(tx, eventKey{ns, j.Queue, "completed"})
		case from == job.Active && (j.State == job.Retrying || j.State == job.Dead || j.State == job.Pending):
			st.add(tx, eventKey{ns, j.Queue, "failed"}) // a lost lease counts as a failed attempt
		}
		if j.State == job.Dead {
			st.add(tx, eventKey{ns, j.Queue, "dead"})
		}
	}
}

// ObserveFetch records how long a fetch that got a job took.
func ObserveFetch(ns string, start time.Time) {
	fetchSeconds.WithLabelValues(ns).Observe(time.Since(start).Seconds())
}

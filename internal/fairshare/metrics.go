package fairshare

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/jobbie/jobbie/internal/obs"
)

// Metrics of every pool in the process, labelled by pool (Config.Name),
// never by key: keys are tenants and namespaces, too many for labels.
var (
	slotsInUse = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "jobbie_fair_slots_in_use", Help: "Work slots held, by pool.",
	}, []string{"pool"})
	slotsWaiting = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "jobbie_fair_waiting", Help: "Requests waiting for a work slot, by pool.",
	}, []string{"pool"})
	waitSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "jobbie_fair_wait_seconds", Help: "Time a request waited for its work slot, by pool.",
		Buckets: prometheus.ExponentialBuckets(50e-6, 2, 17),
	}, []string{"pool"})
	refusedTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "jobbie_fair_refused_total",
		Help: "Requests refused a work slot: the key's queue was full (key_queue_full), it waited its bound behind its own work (key_waited) or behind others' (pool_busy).",
	}, []string{"pool", "reason"})
)

func init() {
	obs.Registry.MustRegister(slotsInUse, slotsWaiting, waitSeconds, refusedTotal)
}

// metrics are one pool's children, looked up once.
type metrics struct {
	inUse, waiting prometheus.Gauge
	wait           prometheus.Observer
	refused        *prometheus.CounterVec
}

func newMetrics(pool string) *metrics {
	return &metrics{inUse: slotsInUse.WithLabelValues(pool), waiting: slotsWaiting.WithLabelValues(pool),
		wait: waitSeconds.WithLabelValues(pool), refused: refusedTotal}
}

func (m *metrics) waited(d time.Duration) { m.wait.Observe(d.Seconds()) }

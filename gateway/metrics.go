package gateway

import (
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/jobbie/jobbie/internal/obs"
)

// Gateway metrics, by route pattern (never the raw path: ids would explode
// the label set) and status.
var (
	requestsTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "jobbie_gateway_requests_total", Help: "Requests by route and status.",
	}, []string{"method", "route", "status"})
	requestSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "jobbie_gateway_request_seconds", Help: "Request time by route, long-polls included.",
		Buckets: prometheus.ExponentialBuckets(250e-6, 2, 18),
	}, []string{"method", "route"})
)

// revocationAge is the age of the revocation list in use.
var revocationAge = prometheus.NewGaugeFunc(prometheus.GaugeOpts{
	Name: "jobbie_gateway_revocation_list_age_seconds",
	Help: "Age of the revocation list in use (the oldest among this process's gateways); keys are refused past the freshness bound.",
}, oldestRevocationList)

// liveGateways are the started, not yet stopped gateways of this process,
// whose revocation lists revocationAge reports.
var liveGateways sync.Map // *Server → struct{}

func oldestRevocationList() float64 {
	var oldest time.Duration
	liveGateways.Range(func(k, _ any) bool {
		s := k.(*Server)
		age, _ := s.gate.RevocationAge(s.cfg.Clock.Now())
		oldest = max(oldest, age)
		return true
	})
	return oldest.Seconds()
}

func init() {
	obs.Registry.MustRegister(requestsTotal, requestSeconds, revocationAge)
}

// routeMetrics holds one route's children, looked up once: its request
// counter per status is kept too, since a WithLabelValues (hashing three
// labels, formatting the status) on every request is work a route's few
// statuses need not repeat.
type routeMetrics struct {
	method, path string
	seconds      prometheus.Observer
	mu           sync.RWMutex
	byStatus     map[int]prometheus.Counter
}

func newRouteMetrics(rt route) *routeMetrics {
	return &routeMetrics{method: rt.method, path: rt.path, seconds: requestSeconds.WithLabelValues(rt.method, rt.path),
		byStatus: map[int]prometheus.Counter{}}
}

func (m *routeMetrics) observe(status int, took time.Duration) {
	m.seconds.Observe(took.Seconds())
	m.counter(status).Inc()
}

func (m *routeMetrics) counter(status int) prometheus.Counter {
	m.mu.RLock()
	c, ok := m.byStatus[status]
	m.mu.RUnlock()
	if ok {
		return c
	}
	c = requestsTotal.WithLabelValues(m.method, m.path, strconv.Itoa(status))
	m.mu.Lock()
	m.byStatus[status] = c
	m.mu.Unlock()
	return c
}

package gateway

import (
	"strconv"
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

func init() { obs.Registry.MustRegister(requestsTotal, requestSeconds) }

// routeMetrics holds one route's children, looked up once.
type routeMetrics struct {
	method, path string
	seconds      prometheus.Observer
}

func newRouteMetrics(rt route) *routeMetrics {
	return &routeMetrics{method: rt.method, path: rt.path, seconds: requestSeconds.WithLabelValues(rt.method, rt.path)}
}

func (m *routeMetrics) observe(status int, took time.Duration) {
	m.seconds.Observe(took.Seconds())
	requestsTotal.WithLabelValues(m.method, m.path, strconv.Itoa(status)).Inc()
}

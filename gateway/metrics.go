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

// Gauges and counters of the gateway's limits, summed over the gateways
// of a process (one, but for tests).
var (
	openConns = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "jobbie_gateway_open_connections", Help: "Client connections open.",
	})
	acceptErrors = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "jobbie_gateway_accept_errors_total", Help: "Failed accepts of client connections (EMFILE and the like), each retried.",
	})
	longPollsWaiting = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "jobbie_gateway_long_polls", Help: "Fetches waiting for a job (long-polls) in flight.",
	})
	refusedTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "jobbie_gateway_limited_total", Help: "Requests refused with 429 by a gateway limit, by limit.",
	}, []string{"limit"})
	movingResent = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "jobbie_gateway_moving_resent_total", Help: "Requests sent again because their namespace was moving to another shard.",
	})
	movingGaveUp = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "jobbie_gateway_moving_gave_up_total",
		Help: "Requests whose namespace was still moving when their retry budget ran out (the client got the shard's 503 and Retry-After).",
	})
	revocationAge = prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "jobbie_gateway_revocation_list_age_seconds",
		Help: "Age of the revocation list in use (the oldest among this process's gateways); keys are refused past the freshness bound.",
	}, oldestRevocationList)
)

// The limit label of jobbie_gateway_limited_total.
const (
	limitConnsPerAddr       = "connections_per_address"
	limitLongPollsPerKey    = "long_polls_per_key"
	limitLongPollsPerTenant = "long_polls_per_tenant"
)

// liveGateways are the started, not yet stopped gateways of this process,
// whose revocation lists revocationAge reports.
var liveGateways sync.Map // *Server → struct{}

func oldestRevocationList() float64 {
	var oldest time.Duration
	liveGateways.Range(func(k, _ any) bool {
		s := k.(*Server)
		oldest = max(oldest, s.revs.age(s.cfg.Clock.Now()))
		return true
	})
	return oldest.Seconds()
}

func init() {
	obs.Registry.MustRegister(requestsTotal, requestSeconds, openConns, acceptErrors, longPollsWaiting, refusedTotal,
		movingResent, movingGaveUp, revocationAge)
}

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

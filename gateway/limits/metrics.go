package limits

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/jobbie/jobbie/internal/obs"
)

// Gauges and counters of the gateway's limits, summed over the gateways
// of a process (one, but for tests).
var (
	openConns = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "jobbie_gateway_open_connections", Help: "Client connections open.",
	})
	longPollsWaiting = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "jobbie_gateway_long_polls", Help: "Fetches waiting for a job (long-polls) in flight.",
	})
	refusedTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "jobbie_gateway_limited_total", Help: "Requests refused with 429 by a gateway limit, by limit.",
	}, []string{"limit"})
)

// The limit label of jobbie_gateway_limited_total.
const (
	limitConnsPerAddr       = "connections_per_address"
	limitLongPollsPerKey    = "long_polls_per_key"
	limitLongPollsPerTenant = "long_polls_per_tenant"
)

func init() { obs.Registry.MustRegister(openConns, longPollsWaiting, refusedTotal) }

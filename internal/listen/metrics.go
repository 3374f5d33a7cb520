package listen

import "github.com/prometheus/client_golang/prometheus"

// The listeners' metrics, by listener name; obs registers them (Metrics)
// in the process's registry, as obs itself listens with this package.
var (
	openConns = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "jobbie_listener_open_connections", Help: "Connections open, by listener.",
	}, []string{"listener"})
	acceptErrors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "jobbie_listener_accept_errors_total", Help: "Failed accepts (EMFILE and the like), each retried with backoff, by listener.",
	}, []string{"listener"})
	refusedTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "jobbie_listener_refused_total", Help: "Connections closed at accept because a cap was reached, by listener and cap.",
	}, []string{"listener", "cap"})
)

// Metrics are the collectors of every listener in the process.
func Metrics() []prometheus.Collector {
	return []prometheus.Collector{openConns, acceptErrors, refusedTotal}
}

// Package obs serves Prometheus metrics for every Jobbie process. Metrics
// carry namespace labels, so /metrics is for the operator's scraper only:
// served to metrics and operator certificates (pki.Scrapers).
package obs

import (
	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/adaptor"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/jobbie/jobbie/internal/listen"
)

// Registry is the process's metrics registry: Go runtime and process
// metrics plus whatever the roles running in this process register.
var Registry = func() *prometheus.Registry {
	r := prometheus.NewRegistry()
	r.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	r.MustRegister(listen.Metrics()...)
	return r
}()

// Serve answers with the registry's metrics; the route puts its own
// guard in front (an internal caller's certificate, an operator key).
func Serve() fiber.Handler {
	return adaptor.HTTPHandler(promhttp.HandlerFor(Registry, promhttp.HandlerOpts{}))
}

package api

import (
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/jonboulle/clockwork"
	"github.com/valyala/fasthttp"

	"github.com/jobbie/jobbie/control/service"
	"github.com/jobbie/jobbie/internal/pki"
)

// Config is what the HTTP API needs of the node's configuration.
type Config struct {
	NodeID string
	TLS    *pki.Credentials
	Clock  clockwork.Clock
	Logger *slog.Logger
}

// Server is the control plane's HTTP API over a service: every handler
// decodes, calls the service and encodes; the gates check the callers and
// forward to the leader (forward.go).
type Server struct {
	*service.Service
	cfg       Config
	log       *slog.Logger
	app       *fiber.App
	fwd       *fasthttp.Client // to the leader (forward.go)
	streamFwd *http.Client     // to the leader, for answers streamed back (forward_stream.go)
}

// New builds the API of svc.
func New(svc *service.Service, cfg Config) *Server {
	s := &Server{Service: svc, cfg: cfg, log: cfg.Logger.With("role", "control"),
		fwd: newForwarder(cfg.TLS), streamFwd: newStreamForwarder(cfg.TLS)}
	s.app = s.newApp()
	return s
}

// Serve serves the API on ln until Shutdown.
func (s *Server) Serve(ln net.Listener) error { return s.app.Listener(ln) }

// Shutdown stops serving, letting requests in flight finish up to timeout,
// and drops the idle connections of streamed forwards.
func (s *Server) Shutdown(timeout time.Duration) error {
	defer s.streamFwd.CloseIdleConnections()
	return s.app.ShutdownWithTimeout(timeout)
}

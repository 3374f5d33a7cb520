package api

import (
	"log/slog"
	"net"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/jonboulle/clockwork"

	"github.com/jobbie/jobbie/control/service"
	"github.com/jobbie/jobbie/internal/pki"
	"github.com/jobbie/jobbie/internal/replica/edge"
	"github.com/jobbie/jobbie/internal/shardclient"
)

// Config is what the HTTP API needs of the node's configuration.
type Config struct {
	NodeID string
	TLS    *pki.Credentials
	Clock  clockwork.Clock
	Logger *slog.Logger
	// AdvertisedHTTP is where other nodes reach this node's HTTP API.
	AdvertisedHTTP func() string
	// Listening is the first of the process's listeners that cannot
	// accept connections, nil while all can (/readyz fails meanwhile);
	// nil: not asked.
	Listening func() error
}

// Server is the control plane's HTTP API over a service: every handler
// decodes, calls the service and encodes; the gates check the callers and
// forward to the leader (forward.go).
type Server struct {
	*service.Service
	cfg   Config
	log   *slog.Logger
	app   *fiber.App
	peers *shardclient.Client // to the other control nodes
	group *edge.Group         // forwarding, status, members, joining (forward.go)
}

// New builds the API of svc.
func New(svc *service.Service, cfg Config) *Server {
	s := &Server{Service: svc, cfg: cfg, log: cfg.Logger.With("role", "control"), peers: newPeers(cfg)}
	s.group = s.newGroup(s.peers)
	s.app = s.newApp()
	return s
}

// Serve serves the API on ln until Shutdown.
func (s *Server) Serve(ln net.Listener) error { return s.app.Listener(ln) }

// Shutdown stops serving, letting requests in flight finish up to timeout,
// and drops the connections to the other nodes.
func (s *Server) Shutdown(timeout time.Duration) error {
	defer s.peers.Close()
	defer s.group.Close()
	return s.app.ShutdownWithTimeout(timeout)
}

package shard

import (
	"context"
	"crypto/subtle"
	"fmt"
	"net"
	"os"
	"time"

	gojson "github.com/goccy/go-json"
	"github.com/gofiber/fiber/v2"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/obs"
	"github.com/jobbie/jobbie/internal/replica"
)

// NamespaceHeader names the shard namespace of a request.
const NamespaceHeader = "X-Jobbie-Shard-Namespace"

// MaxRequestBody bounds any request to a shard (a batch of 1,000 jobs).
const MaxRequestBody = 16 << 20

// Server is a shard node: its engine and its internal HTTP API.
type Server struct {
	*Engine
	app     *fiber.App
	ln      net.Listener
	unix    net.Listener
	cluster clusterState // cluster.go
}

// New opens the engine and builds the HTTP API; Start serves it.
func New(cfg Config) (*Server, error) {
	e, err := OpenEngine(cfg)
	if err != nil {
		return nil, err
	}
	s := &Server{Engine: e, cluster: newClusterState()}
	s.app = fiber.New(fiber.Config{
		ErrorHandler:          apierr.Handler,
		JSONEncoder:           gojson.Marshal, // encoding/json-compatible, faster on the fetch answers
		BodyLimit:             MaxRequestBody,
		DisableStartupMessage: true,
		ReadTimeout:           2 * time.Minute,
		IdleTimeout:           2 * time.Minute,
	})
	s.routes()
	return s, nil
}

// Start listens on the configured address and serves until Stop.
func (s *Server) Start() error {
	ln, err := net.Listen("tcp", s.cfg.HTTPAddr)
	if err != nil {
		return fmt.Errorf("shard: listen: %w", err)
	}
	s.ln = ln
	go func() { _ = s.app.Listener(ln) }()
	if p := s.cfg.SocketPath; p != "" {
		_ = os.Remove(p) // a socket left by a crash
		ul, err := net.Listen("unix", p)
		if err != nil {
			return fmt.Errorf("shard: listen on %s: %w", p, err)
		}
		s.unix = ul
		go func() { _ = s.app.Listener(ul) }()
	}
	s.startCluster()
	return nil
}

// Addr is the bound HTTP address.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// App exposes the fiber app (for in-process tests).
func (s *Server) App() *fiber.App { return s.app }

// Stop ends long-polls, stops serving and closes the engine.
func (s *Server) Stop() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s.stopCluster()
	// Close the engine first: it releases parked fetches so the HTTP
	// shutdown does not wait out their timeouts.
	err := s.Engine.Close()
	if s.ln != nil {
		_ = s.app.ShutdownWithContext(ctx)
	}
	return err
}

func (s *Server) routes() {
	s.app.Use(apierr.RequestID)
	s.app.Get("/healthz", func(c *fiber.Ctx) error { return c.JSON(fiber.Map{"status": "ok"}) })
	s.app.Get("/readyz", s.readyz)
	s.app.Get("/metrics", obs.Handler(s.cfg.ClusterSecret))
	api := s.app.Group("/api/v1", s.authenticate, s.forwardToLeader)
	api.Post("/enqueue", s.enqueue)
	api.Post("/enqueue/batch", s.enqueueBatch)
	api.Post("/fetch", s.fetch)
	api.Post("/fetch/batch", s.fetchBatch)
	api.Post("/ack/batch", s.ackBatch) // before /ack/:id, which would match it
	api.Post("/ack/:id", s.ack)
	api.Post("/fail/:id", s.fail)
	api.Post("/heartbeat", s.heartbeat)
	api.Get("/jobs/:id", s.getJob)
	api.Post("/jobs/:id/retry", s.retryJob)
	api.Post("/jobs/:id/cancel", s.cancelJob)
	api.Post("/jobs/:id/move", s.moveJob)
	api.Delete("/jobs/:id", s.deleteJob)
	api.Get("/dead", s.listDead)
	api.Get("/batches/:id", s.getBatch)
	s.scheduleRoutes(api)
	s.queueRoutes(api)
	s.liveRoutes(api)
	s.searchRoutes(api)
	s.clusterRoutes()
}

// authenticate admits only callers holding the cluster secret.
func (s *Server) authenticate(c *fiber.Ctx) error {
	const prefix = "Bearer "
	h := c.Get(fiber.HeaderAuthorization)
	if len(h) <= len(prefix) || h[:len(prefix)] != prefix ||
		subtle.ConstantTimeCompare([]byte(h[len(prefix):]), []byte(s.cfg.ClusterSecret)) != 1 {
		return apierr.New(apierr.Unauthenticated, "shard API needs the cluster secret")
	}
	return c.Next()
}

// readyz answers 200 on the leader, and on a follower that knows a leader
// and has applied nearly all it knows committed (it serves reads and
// forwards writes); 503 otherwise.
func (s *Server) readyz(c *fiber.Ctx) error {
	st := s.node.Status()
	if !st.Ready && (st.LeaderID == "" || st.State != replica.StateFollower || st.CommitIndex > st.AppliedIndex+readyLag) {
		return apierr.Retry(apierr.NoLeader, 1, "this node has no leader or is catching up")
	}
	return c.JSON(fiber.Map{"status": "ready", "shard_id": s.cfg.ShardID, "node_id": s.cfg.NodeID, "state": st.State})
}

// readyLag is how many committed entries a ready follower may not have
// applied yet.
const readyLag = 1024

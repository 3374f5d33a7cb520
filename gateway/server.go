package gateway

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"sync"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"

	"github.com/jobbie/jobbie/gateway/admin"
	"github.com/jobbie/jobbie/gateway/admission"
	"github.com/jobbie/jobbie/gateway/console"
	"github.com/jobbie/jobbie/gateway/controlapi"
	"github.com/jobbie/jobbie/gateway/limits"
	"github.com/jobbie/jobbie/gateway/proxy"
	"github.com/jobbie/jobbie/gateway/selfhosted"
	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/fairshare"
	"github.com/jobbie/jobbie/internal/listen"
	"github.com/jobbie/jobbie/internal/obs"
	"github.com/jobbie/jobbie/internal/outbound"
	"github.com/jobbie/jobbie/internal/shardclient"
	"github.com/jobbie/jobbie/internal/tracing"
)

// Server is a gateway: build it with New, then Start and Stop it.
type Server struct {
	cfg          Config
	log          *slog.Logger
	app          *fiber.App
	control      controlapi.Control
	closeControl func()
	gate         *admission.Gate   // who calls, and what they may do
	plans        *limits.Plans     // tenants' plans and rate limits
	quotas       *limits.Quotas    // payload and monthly execution quotas
	schedules    *limits.Schedules // tenants' schedule counts under max_schedules
	polls        *limits.LongPolls
	meter        *limits.Meter        // the api_requests meter
	work         *fairshare.Scheduler // tenants' shares of the gateway's cores (workslots.go)
	proxy        *proxy.Proxy
	shards       *shardclient.Client
	admin        *admin.Admin
	ssoOut       *outbound.Client // the console's calls to identity providers (sso.go)
	console      *console.Console
	tunnels      *selfhosted.Tunnels // nil without Config.TunnelAddr
	tunnelLn     net.Listener
	listeners    *listen.Group           // every listener of the gateway's, for /readyz
	metrics      *obs.Listener           // /metrics over mutual TLS, with MetricsAddr
	handler      fasthttp.RequestHandler // the app's, for gRPC calls (grpc.go)
	grpc         *http.Server            // nil without GRPCAddr
	grpcLn       *listen.Listener
	tr           *tracing.Tracer // the gateway's spans; nil: tracing off
	grpcTLS      bool            // the gRPC port speaks TLS

	ctx       context.Context // ends when the server stops
	cancel    context.CancelFunc
	ready     chan struct{}
	readyOnce sync.Once
	wg        sync.WaitGroup

	mu        sync.Mutex
	ln        *limits.Listener
	stopAfter func() bool
	stopOnce  sync.Once
	stopErr   error
}

// New builds a gateway from cfg (defaults applied). It does not listen or
// call control until Start.
func New(cfg Config) (*Server, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{cfg: cfg, log: cfg.Logger, ctx: ctx, cancel: cancel, ready: make(chan struct{}), listeners: cfg.Listeners}
	if s.listeners == nil {
		s.listeners = listen.NewGroup()
	}
	s.control, s.closeControl = newControl(cfg)
	if err := s.assemble(); err != nil {
		cancel()
		s.closeControl()
		return nil, err
	}
	s.app = s.newApp()
	s.handler = s.app.Handler()
	return s, nil
}

// assemble builds the gateway's parts, each from its share of the config.
func (s *Server) assemble() error {
	cfg, err := s.cfg, error(nil)
	s.gate, err = admission.New(s.ctx, admission.Config{Control: s.control, Clock: cfg.Clock, Logger: cfg.Logger,
		Local: cfg.Local != nil, TokenCacheSize: cfg.TokenCacheSize, DecisionCacheSize: cfg.DecisionCacheSize,
		JWKSMinRefresh: cfg.JWKSMinRefresh, RevocationMaxAge: cfg.RevocationMaxAge,
		SessionIdle: cfg.SessionIdleTimeout, SessionMax: cfg.SessionMaxAge})
	if err != nil {
		return err
	}
	rp, err := s.newSSO()
	if err != nil {
		return err
	}
	if s.console, err = console.New(console.Config{Gate: s.gate, Clock: cfg.Clock, Dir: cfg.ConsoleDir, Dist: cfg.consoleDist,
		Limit: s.limitSession, SSO: rp, PublicURL: cfg.ConsolePublicURL,
		SignInLimit: limits.NewSignIns(cfg.SSOSignInsPerAddress, cfg.SSOSignInsPerTenant, cfg.Clock).Allow}); err != nil {
		return err
	}
	shardCfg := shardclient.Config{TLS: cfg.TLS, Gossip: cfg.Gossip,
		Name: "jobbie-gateway", MaxConns: cfg.ShardMaxConns, WriteTimeout: cfg.ShardTimeout,
		MaxResponseBody: cfg.BatchBodyLimit * 4, RetryTimeout: cfg.LeaderRetryTimeout,
		RetryBackoff: cfg.retryBackoff, Logger: cfg.Logger}
	if cfg.TunnelAddr != "" {
		if s.tunnels, err = selfhosted.NewTunnels(selfhosted.TunnelsConfig{TLS: cfg.TLS, SelfHostedCA: cfg.SelfHostedCA,
			Control: s.control, Logger: cfg.Logger}); err != nil {
			return err
		}
		shardCfg.Tunnel, shardCfg.ShardOwner = s.tunnels.Registry(), s.tunnels.Owner
	}
	s.shards = shardclient.New(shardCfg)
	if s.tunnels != nil {
		s.tunnels.Attach(s.shards)
	}
	if s.proxy, err = proxy.New(s.ctx, proxy.Config{Control: s.control, Shards: s.shards, Clock: cfg.Clock, Logger: cfg.Logger,
		PlacementTTL: cfg.PlacementTTL, PlacementMissTTL: cfg.PlacementMissTTL, PlacementCacheSize: cfg.PlacementCacheSize,
		ShardTimeout: cfg.ShardTimeout, WriteTimeout: cfg.WriteTimeout, BodyLimit: cfg.BodyLimit}); err != nil {
		return err
	}
	lc := limits.Config{Control: s.control, Clock: cfg.Clock, Logger: cfg.Logger, Gossip: cfg.Gossip, TLS: cfg.TLS,
		PlanRefreshInterval: cfg.PlanRefreshInterval, PlanFetchWait: cfg.PlanFetchWait, RateLimitSyncInterval: cfg.RateLimitSyncInterval,
		ControlTimeout: cfg.ControlTimeout, ShardTimeout: cfg.ShardTimeout}
	s.plans = limits.NewPlans(s.ctx, lc)
	s.quotas = limits.NewQuotas(s.plans, lc)
	s.schedules = limits.NewSchedules(s.ctx, s.plans, s.proxy, lc)
	s.polls = limits.NewLongPolls(cfg.MaxLongPollsPerKey, cfg.MaxLongPollsPerTenant)
	s.meter = limits.NewMeter(s.control, cfg.Logger)
	s.work = newWorkSlots(cfg.workWait)
	if s.tr, err = tracing.FromEnv(s.ctx, tracing.Config{Service: "jobbie-gateway", ShareSystem: cfg.TraceShareSystem}); err != nil {
		return err
	}
	s.admin = admin.New(s.ctx, admin.Config{Control: s.control, Gate: s.gate, Proxy: s.proxy, Schedules: s.schedules,
		Tunnels: s.tunnels, Clock: cfg.Clock, Logger: cfg.Logger, WriteTimeout: cfg.WriteTimeout})
	return nil
}

func (s *Server) newApp() *fiber.App {
	app := fiber.New(fiber.Config{
		ErrorHandler: limits.HandleError,
		// fasthttp has one server-wide limit: the largest one. Admission
		// enforces each route's own limit.
		BodyLimit:    max(s.cfg.BodyLimit, s.cfg.BatchBodyLimit),
		ReadTimeout:  s.cfg.ReadTimeout,
		WriteTimeout: s.cfg.WriteTimeout,
		IdleTimeout:  s.cfg.IdleTimeout,
		// Keys with many namespaces make long headers; beyond this a request
		// gets 431 headers_too_large.
		ReadBufferSize:        16 << 10,
		DisableStartupMessage: true,
	})
	app.Use(s.recoverPanic, apierr.RequestID, limits.LimitConns)
	app.Get("/healthz", func(c *fiber.Ctx) error { return c.JSON(fiber.Map{"status": "ok"}) })
	app.Get("/readyz", s.readyz)
	// Metrics are on MetricsAddr, never on the public port.
	s.register(app)
	if s.cfg.Local == nil {
		s.console.Register(app)
	}
	return app
}

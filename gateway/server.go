package gateway

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"runtime/debug"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"
	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/obs"
	"github.com/jobbie/jobbie/internal/shardclient"
)

// Server is a gateway: build it with New, then Start and Stop it.
type Server struct {
	cfg        Config
	log        *slog.Logger
	app        *fiber.App
	control    *controlClient
	keys       *keySet
	revs       *revocations
	uses       *keyUses
	requests   *requestCounter // the api_requests meter (usage.go)
	plans      *planCache      // tenants' plans and rate limits (limits.go)
	schedules  *scheduleCounts // tenants' schedule counts under max_schedules (schedquota.go)
	auth       *authenticator
	rbac       *authorizer
	roles      *roleCache
	placements *placements
	shards     *shardclient.Client
	tunnels    *tunnels // nil without Config.TunnelAddr
	tunnelLn   net.Listener
	polls      *longPolls
	metrics    *obs.Listener          // /metrics over mutual TLS, with MetricsAddr
	revsStale  bool                   // the revocation loop's view, to log changes once
	sessions   *sessions              // console sessions (session.go)
	console    map[string]consoleFile // the built console front end; nil when not built

	ctx       context.Context // ends when the server stops
	cancel    context.CancelFunc
	ready     chan struct{}
	readyOnce sync.Once
	wg        sync.WaitGroup

	mu        sync.Mutex
	ln        *listener
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
	rbac, err := newAuthorizer(cfg.DecisionCacheSize)
	if err != nil {
		return nil, fmt.Errorf("gateway: %w", err)
	}
	placementCache, err := lru.New[placementKey, *placement](cfg.PlacementCacheSize)
	if err != nil {
		return nil, fmt.Errorf("gateway: %w", err)
	}
	control := newControlClient(cfg)
	keys := &keySet{control: control, minGap: cfg.JWKSMinRefresh, clock: cfg.Clock}
	revs := newRevocations(control, cfg.Clock, cfg.RevocationMaxAge)
	uses := newKeyUses(control, cfg.Logger)
	ctx, cancel := context.WithCancel(context.Background())
	auth, err := newAuthenticator(ctx, keys, revs, uses, cfg.TokenCacheSize, cfg.Clock)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("gateway: %w", err)
	}
	auth.local = cfg.Local != nil
	sess, err := newSessions(auth, cfg.TokenCacheSize)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("gateway: %w", err)
	}
	console, err := embeddedConsole()
	if cfg.ConsoleDir != "" && cfg.consoleDist == nil {
		if _, serr := os.Stat(filepath.Join(cfg.ConsoleDir, "index.html")); serr != nil {
			cancel()
			return nil, fmt.Errorf("gateway: console directory %s has no index.html (build it with npm run build)", cfg.ConsoleDir)
		}
		cfg.consoleDist = os.DirFS(cfg.ConsoleDir)
	}
	if cfg.consoleDist != nil {
		console, err = consoleFiles(cfg.consoleDist)
	}
	if err != nil {
		cancel()
		return nil, fmt.Errorf("gateway: console: %w", err)
	}
	var tun *tunnels
	shardCfg := shardclient.Config{TLS: cfg.TLS, Gossip: cfg.Gossip,
		Name: "jobbie-gateway", MaxConns: cfg.ShardMaxConns, WriteTimeout: cfg.ShardTimeout,
		MaxResponseBody: cfg.BatchBodyLimit * 4, RetryTimeout: cfg.LeaderRetryTimeout,
		RetryBackoff: cfg.retryBackoff, Logger: cfg.Logger}
	if cfg.TunnelAddr != "" {
		if tun, err = newTunnels(cfg, control); err != nil {
			cancel()
			return nil, err
		}
		shardCfg.Tunnel, shardCfg.ShardOwner = tun.reg, tun.owner
	}
	s := &Server{
		tunnels:  tun,
		cfg:      cfg,
		sessions: sess,
		console:  console,
		log:      cfg.Logger,
		control:  control,
		keys:     keys,
		revs:     revs,
		uses:     uses,
		requests: newRequestCounter(control, cfg.Logger),
		auth:     auth,
		rbac:     rbac,
		roles:    newRoleCache(ctx, control),
		polls:    newLongPolls(cfg.MaxLongPollsPerKey, cfg.MaxLongPollsPerTenant),
		shards:   shardclient.New(shardCfg),
		ctx:      ctx,
		cancel:   cancel,
		ready:    make(chan struct{}),
	}
	revs.onRoles = s.roles.update
	s.plans = newPlanCache(ctx, cfg, control, newRateSync(cfg))
	s.schedules = newScheduleCounts()
	s.placements = &placements{
		cache:   placementCache,
		control: control,
		shards:  s.shards,
		clock:   cfg.Clock,
		ttl:     cfg.PlacementTTL,
		missTTL: cfg.PlacementMissTTL,
		log:     cfg.Logger,
		ctx:     ctx,
	}
	s.app = s.newApp()
	return s, nil
}

func (s *Server) newApp() *fiber.App {
	app := fiber.New(fiber.Config{
		ErrorHandler: s.handleError,
		// fasthttp has one server-wide limit: the largest one. admit enforces
		// each route's own limit.
		BodyLimit:    max(s.cfg.BodyLimit, s.cfg.BatchBodyLimit),
		ReadTimeout:  s.cfg.ReadTimeout,
		WriteTimeout: s.cfg.WriteTimeout,
		IdleTimeout:  s.cfg.IdleTimeout,
		// Keys with many namespaces make long headers; beyond this a request
		// gets 431 headers_too_large.
		ReadBufferSize:        16 << 10,
		DisableStartupMessage: true,
	})
	app.Use(s.recoverPanic, apierr.RequestID, s.limitConns)
	app.Get("/healthz", func(c *fiber.Ctx) error { return c.JSON(fiber.Map{"status": "ok"}) })
	app.Get("/readyz", s.readyz)
	// Metrics are on MetricsAddr, never on the public port.
	s.register(app)
	if s.cfg.Local == nil {
		s.registerConsole(app)
	}
	return app
}

// Start listens on Config.Addr, serves in the background and starts
// keeping signing keys and revocations current. Cancelling ctx stops the
// server as Stop does.
func (s *Server) Start(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ln != nil {
		return errors.New("gateway: already started")
	}
	if s.ctx.Err() != nil {
		return errors.New("gateway: stopped")
	}
	public, err := publicTLS(s.cfg)
	if err != nil {
		return err
	}
	tcp, err := net.Listen("tcp", s.cfg.Addr)
	if err != nil {
		return fmt.Errorf("gateway: listen: %w", err)
	}
	if s.cfg.MetricsAddr != "" {
		if s.metrics, err = obs.Listen(s.cfg.MetricsAddr, s.cfg.TLS); err != nil {
			_ = tcp.Close()
			return fmt.Errorf("gateway: %w", err)
		}
	}
	if s.tunnels != nil {
		if s.tunnelLn, err = net.Listen("tcp", s.cfg.TunnelAddr); err != nil {
			_ = tcp.Close()
			if s.metrics != nil {
				_ = s.metrics.Close()
			}
			return fmt.Errorf("gateway: tunnel listener: %w", err)
		}
		s.wg.Add(3)
		go s.runTrustPush()
		go func() {
			defer s.wg.Done()
			if err := s.tunnels.serve(s.tunnelLn); err != nil && s.ctx.Err() == nil {
				s.log.Error("gateway: tunnel listener", "err", err)
			}
		}()
		go s.poll("self-hosted shards", s.cfg.RevocationInterval, s.tunnels.refresh)
	}
	ln := newListener(tcp, s.cfg.MaxConnsPerAddr, s.log)
	s.ln = ln
	liveGateways.Store(s, struct{}{})
	s.wg.Add(6)
	var served net.Listener = ln
	if public != nil {
		served = tls.NewListener(ln, public)
	}
	go s.serve(served)
	go func() {
		defer s.wg.Done()
		s.shards.Run(s.ctx)
	}()
	go s.poll("revocation list", s.cfg.RevocationInterval, s.refreshRevocations)
	go s.poll("signing keys", s.cfg.JWKSInterval, s.keys.refresh)
	go s.poll("key usage", s.cfg.KeyUsageInterval, s.uses.report)
	s.startLimits()
	go func() {
		defer s.wg.Done()
		s.requests.run(s.ctx, s.cfg.UsagePushInterval, s.cfg.Clock.Now)
	}()
	s.stopAfter = context.AfterFunc(ctx, func() { _ = s.Stop() })
	s.log.Info("gateway: serving", "addr", ln.Addr().String(), "control", s.cfg.ControlURL)
	return nil
}

func (s *Server) serve(ln net.Listener) {
	defer s.wg.Done()
	if err := s.app.Listener(apierr.QuietListener(ln)); err != nil && s.ctx.Err() == nil {
		s.log.Error("gateway: serve", "err", err)
	}
}

// Addr is the address the server listens on; empty before Start.
func (s *Server) Addr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ln == nil {
		return ""
	}
	return s.ln.Addr().String()
}

// TunnelAddr is where self-hosted shards dial in; empty without
// Config.TunnelAddr or before Start.
func (s *Server) TunnelAddr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tunnelLn == nil {
		return ""
	}
	return s.tunnelLn.Addr().String()
}

// MetricsAddr is where /metrics is served; empty without Config.MetricsAddr
// or before Start.
func (s *Server) MetricsAddr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.metrics == nil {
		return ""
	}
	return s.metrics.Addr()
}

// Ready is closed once signing keys and the revocation list are loaded,
// when the gateway starts admitting keys.
func (s *Server) Ready() <-chan struct{} { return s.ready }

// Stop stops listening, waits up to Config.ShutdownTimeout for requests in
// flight, and ends the background loops. It is safe to call more than once.
func (s *Server) Stop() error {
	s.stopOnce.Do(func() {
		s.mu.Lock()
		ln, stopAfter := s.ln, s.stopAfter
		s.mu.Unlock()
		if stopAfter != nil {
			stopAfter()
		}
		s.cancel()
		if s.tunnels != nil {
			_ = s.tunnels.reg.Close() // ends its Serve and every session
		}
		if ln != nil {
			s.stopErr = s.app.ShutdownWithTimeout(s.cfg.ShutdownTimeout)
			// Closing the listener ourselves also ends a Serve that had not
			// yet registered it when Shutdown ran.
			_ = ln.Close()
		}
		s.wg.Wait()
		if ln != nil {
			s.uses.reportLast(min(s.cfg.ControlTimeout, 2*time.Second))
			s.requests.pushLast(min(s.cfg.ControlTimeout, 2*time.Second), s.cfg.Clock.Now())
		}
		if s.metrics != nil {
			_ = s.metrics.Close()
		}
		liveGateways.Delete(s)
		s.shards.Close()
		s.control.http.CloseIdleConnections()
	})
	return s.stopErr
}

// poll runs refresh now and then every interval, retrying failures sooner,
// and logs only when its health changes so an outage is one line.
func (s *Server) poll(what string, interval time.Duration, refresh func(context.Context) error) {
	defer s.wg.Done()
	retry := min(interval, 500*time.Millisecond)
	failing := false
	t := s.cfg.Clock.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-s.ctx.Done():
			return
		case <-t.Chan():
		}
		err := refresh(s.ctx)
		switch {
		case err != nil && s.ctx.Err() != nil:
			return
		case err != nil:
			if !failing {
				s.log.Warn("gateway: cannot refresh "+what, "err", err)
			}
			failing = true
			t.Reset(retry)
			continue
		case failing:
			s.log.Info("gateway: refreshing " + what + " again")
			failing = false
		}
		if s.auth.ready() {
			s.readyOnce.Do(func() { close(s.ready) })
		}
		t.Reset(interval)
	}
}

// refreshRevocations refreshes the revocation list and logs when it
// passes its freshness bound, and when it is fresh again.
func (s *Server) refreshRevocations(ctx context.Context) error {
	err := s.revs.refresh(ctx)
	age, stale := s.revs.stale(s.cfg.Clock.Now())
	switch {
	case stale && !s.revsStale && ctx.Err() == nil:
		s.log.Error("gateway: revocation list is older than its freshness bound: refusing API keys with 503 until control answers",
			"age", age.Truncate(time.Second), "bound", s.cfg.RevocationMaxAge, "err", err)
	case !stale && s.revsStale:
		s.log.Info("gateway: revocation list is fresh again: accepting API keys")
	}
	s.revsStale = stale
	return err
}

// readyz fails while the gateway cannot serve: before it has keys and
// revocations, while it cannot accept connections, and while its
// revocation list is stale.
func (s *Server) readyz(c *fiber.Ctx) error {
	s.mu.Lock()
	ln := s.ln
	s.mu.Unlock()
	switch {
	case !s.keys.loaded():
		return apierr.Retry(apierr.Unavailable, 1, "not ready: signing keys not loaded from control yet")
	case !s.revs.loaded():
		return apierr.Retry(apierr.Unavailable, 1, "not ready: revocation list not loaded from control yet")
	}
	if f := ln.failing(); f != nil {
		return apierr.Retry(apierr.Unavailable, 1, "not ready: cannot accept connections since %s ago: %v",
			time.Since(f.since).Truncate(time.Millisecond), f.err)
	}
	if age, stale := s.revs.stale(s.cfg.Clock.Now()); stale {
		return apierr.Retry(apierr.Unavailable, staleRetryAfter, "not ready: the revocation list is %s old, over its bound of %s (control unreachable)",
			age.Truncate(time.Second), s.cfg.RevocationMaxAge)
	}
	return c.JSON(fiber.Map{"status": "ready"})
}

// recoverPanic turns a handler panic into a logged 500 instead of a dead
// process; the panic value stays in the log.
func (s *Server) recoverPanic(c *fiber.Ctx) (err error) {
	defer func() {
		if v := recover(); v != nil {
			s.log.Error("gateway: panic", "panic", v, "path", c.Path(), "stack", string(debug.Stack()))
			err = apierr.New(apierr.Internal, "internal error")
		}
	}()
	return c.Next()
}

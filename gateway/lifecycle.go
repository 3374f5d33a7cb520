package gateway

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/jobbie/jobbie/gateway/limits"
	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/listen"
	"github.com/jobbie/jobbie/internal/obs"
)

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
	listenTCP := net.Listen
	if s.cfg.listen != nil {
		listenTCP = s.cfg.listen
	}
	tcp, err := listenTCP("tcp", s.cfg.Addr)
	if err != nil {
		return fmt.Errorf("gateway: listen: %w", err)
	}
	if s.cfg.MetricsAddr != "" {
		if s.metrics, err = obs.Listen(s.cfg.MetricsAddr, s.cfg.TLS, s.listeners); err != nil {
			_ = tcp.Close()
			return fmt.Errorf("gateway: %w", err)
		}
	}
	if s.cfg.GRPCAddr != "" {
		if err := s.startGRPC(public); err != nil {
			_ = tcp.Close()
			if s.metrics != nil {
				_ = s.metrics.Close()
			}
			return err
		}
	}
	if s.tunnels != nil {
		tl, err := net.Listen("tcp", s.cfg.TunnelAddr)
		if err != nil {
			_ = tcp.Close()
			if s.metrics != nil {
				_ = s.metrics.Close()
			}
			if s.grpc != nil {
				_ = s.grpc.Close()
			}
			return fmt.Errorf("gateway: tunnel listener: %w", err)
		}
		// Its own caps, apart from the public port's: a flood of silent
		// connections here holds at most TunnelMaxHandshakes descriptors,
		// each for TunnelHandshakeTimeout.
		s.tunnelLn = listen.New(tl, listen.Config{Name: "tunnel", HandshakeTimeout: s.cfg.TunnelHandshakeTimeout,
			MaxPending: capOf(s.cfg.TunnelMaxHandshakes), MaxPendingPerAddr: capOf(s.cfg.TunnelMaxHandshakesPerAddr),
			Group: s.listeners, Logger: s.log})
		s.startSelfHosted()
	}
	name := "public"
	if s.cfg.Local != nil {
		name = "local API"
	}
	ln := limits.NewListener(tcp, s.cfg.MaxConnsPerAddr, listen.Config{Name: name, MaxConns: capOf(s.cfg.MaxConns), Group: s.listeners, Logger: s.log})
	s.ln = ln
	liveGateways.Store(s, struct{}{})
	var served net.Listener = ln
	if public != nil {
		served = tls.NewListener(ln, public)
	}
	s.run(func() {
		if err := s.app.Listener(apierr.QuietListener(served)); err != nil && s.ctx.Err() == nil {
			s.log.Error("gateway: serve", "err", err)
		}
	})
	s.run(func() { s.shards.Run(s.ctx) })
	s.run(func() { s.poll("revocation list", s.cfg.RevocationInterval, s.gate.RefreshRevocations) })
	s.run(func() { s.poll("signing keys", s.cfg.JWKSInterval, s.gate.RefreshKeys) })
	s.run(func() { s.poll("key usage", s.cfg.KeyUsageInterval, s.gate.ReportKeyUses) })
	s.run(s.plans.Run)
	s.run(s.plans.RunSync)
	s.run(func() { s.meter.Run(s.ctx, s.cfg.UsagePushInterval, s.cfg.Clock.Now) })
	s.stopAfter = context.AfterFunc(ctx, func() { _ = s.Stop() })
	s.log.Info("gateway: serving", "addr", ln.Addr().String(), "control", s.cfg.ControlURL)
	return nil
}

// startSelfHosted serves the tunnel listener, pushes trust bundles to
// the nodes on it and keeps control's list of self-hosted shards current.
func (s *Server) startSelfHosted() {
	s.run(func() { s.tunnels.PushTrust(s.ctx, s.cfg.TrustPushInterval) })
	s.run(func() {
		if err := s.tunnels.Serve(s.tunnelLn); err != nil && s.ctx.Err() == nil {
			s.log.Error("gateway: tunnel listener", "err", err)
		}
	})
	s.run(func() { s.poll("self-hosted shards", s.cfg.RevocationInterval, s.tunnels.Refresh) })
}

// run runs f in the background until the server stops; Stop waits for it.
func (s *Server) run(f func()) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		f()
	}()
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
			_ = s.tunnels.Close() // ends its Serve and every session
		}
		if ln != nil {
			// gRPC calls are served by the app in process: they end first.
			grpcCtx, cancel := context.WithTimeout(context.Background(), s.cfg.ShutdownTimeout)
			s.stopGRPC(grpcCtx)
			cancel()
			s.stopErr = s.app.ShutdownWithTimeout(s.cfg.ShutdownTimeout)
			// Closing the listener ourselves also ends a Serve that had not
			// yet registered it when Shutdown ran.
			_ = ln.Close()
		}
		if s.proxy != nil {
			s.proxy.Wait() // long-polls answered at the cancel above give back what they leased
		}
		s.wg.Wait()
		if s.ssoOut != nil {
			s.ssoOut.Close()
		}
		if ln != nil {
			s.gate.ReportLastKeyUses(min(s.cfg.ControlTimeout, 2*time.Second))
			s.meter.PushLast(min(s.cfg.ControlTimeout, 2*time.Second), s.cfg.Clock.Now())
		}
		if s.metrics != nil {
			_ = s.metrics.Close()
		}
		liveGateways.Delete(s)
		if s.tr != nil {
			ctx, cancel := context.WithTimeout(context.Background(), s.cfg.ShutdownTimeout)
			_ = s.tr.Shutdown(ctx) // sends the spans it holds, if the collector answers in time
			cancel()
		}
		s.shards.Close()
		s.closeControl()
	})
	return s.stopErr
}

// poll runs refresh now and then every interval, retrying failures sooner,
// and logs only when its health changes so an outage is one line.
func (s *Server) poll(what string, interval time.Duration, refresh func(context.Context) error) {
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
		if s.gate.Ready() {
			s.readyOnce.Do(func() { close(s.ready) })
		}
		t.Reset(interval)
	}
}

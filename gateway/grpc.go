package gateway

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"

	"github.com/valyala/fasthttp"

	"github.com/jobbie/jobbie/gateway/connectapi"
	"github.com/jobbie/jobbie/internal/listen"
	"github.com/jobbie/jobbie/wire"
)

// The gRPC listener (Config.GRPCAddr): JobService, AdminService,
// WorkerService and KEDA's ExternalScaler over Connect (package connectapi), so one port speaks gRPC, gRPC-Web and
// the Connect protocol. fasthttp, under fiber, speaks no HTTP/2, so this
// is net/http's server on a listener of its own: HTTP/2 over TLS with
// the public certificate when the gateway has one (publictls.go), else
// HTTP/2 without TLS (h2c) for local use and for a load balancer that
// ends TLS in front; HTTP/1.1 too, for Connect's unary calls.
//
// Every call is served by the route table in process (serveRoute): the
// same chain, the same rules, as the HTTP request it stands for; a
// worker stream's every fetch, ack, fail, heartbeat, enqueue and release
// too; between its calls a stream's key is judged again, by admission's
// check, when the revocation list changes. When the gateway stops (s.ctx
// ends) each worker stream is sent Drain and given three quarters of
// ShutdownTimeout to close, within the HTTP/2 shutdown's wait.

// startGRPC listens on Config.GRPCAddr and serves the services there.
func (s *Server) startGRPC(public *tls.Config) error {
	tcp, err := net.Listen("tcp", s.cfg.GRPCAddr)
	if err != nil {
		return fmt.Errorf("gateway: gRPC listener: %w", err)
	}
	ln := listen.New(tcp, listen.Config{Name: "grpc", MaxConns: capOf(s.cfg.GRPCMaxConns), Group: s.listeners, Logger: s.log})
	mux := http.NewServeMux()
	work := connectapi.WorkConfig{Stopping: s.ctx, DrainWithin: s.cfg.ShutdownTimeout * 3 / 4, KeepAlive: s.cfg.GRPCKeepAlive,
		CheckKey: func(h string) error { _, err := s.gate.AuthenticateKey(h); return err }, KeysChanged: s.gate.RevocationsChanged}
	scaler := connectapi.ScalerConfig{Poll: s.cfg.GRPCScalerPoll}
	for path, h := range connectapi.New(s.serveRoute, work, scaler).Handlers(max(s.cfg.BodyLimit, s.cfg.BatchBodyLimit)) {
		mux.Handle(path, h)
	}
	var protocols http.Protocols
	protocols.SetHTTP1(true)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: s.cfg.ReadTimeout, IdleTimeout: s.cfg.IdleTimeout,
		MaxHeaderBytes: 16 << 10, Protocols: &protocols, ErrorLog: slog.NewLogLogger(s.log.Handler(), slog.LevelDebug)}
	if public != nil {
		protocols.SetHTTP2(true)
		srv.TLSConfig = &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: public.GetCertificate}
	} else {
		protocols.SetUnencryptedHTTP2(true)
	}
	s.grpc, s.grpcLn, s.grpcTLS = srv, ln, public != nil
	s.run(func() {
		var err error
		if public != nil {
			err = srv.ServeTLS(ln, "", "")
		} else {
			err = srv.Serve(ln)
		}
		if err != nil && err != http.ErrServerClosed && s.ctx.Err() == nil {
			s.log.Error("gateway: gRPC serve", "err", err)
		}
	})
	return nil
}

// stopGRPC stops the gRPC listener and waits for its calls in flight, up
// to ctx.
func (s *Server) stopGRPC(ctx context.Context) {
	if s.grpc == nil {
		return
	}
	if err := s.grpc.Shutdown(ctx); err != nil {
		_ = s.grpc.Close()
	}
	_ = s.grpcLn.Close()
}

// serveRoute serves r with the route table, in process: the fiber app's
// own handler (its middleware, its router, each route's chain) on a
// request built from r, as if it had come on the public port.
func (s *Server) serveRoute(r *connectapi.Request) connectapi.Answer {
	var req fasthttp.Request
	req.Header.SetMethod(r.Method)
	req.SetRequestURI(r.Path)
	req.Header.SetHost("grpc")
	for k, vs := range r.Header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	if r.Body != nil {
		req.Header.SetContentType(fiberJSON)
		req.SetBodyRaw(r.Body)
	}
	var peer net.Addr
	if ap, err := netip.ParseAddrPort(r.Peer); err == nil {
		peer = net.TCPAddrFromAddrPort(ap)
	}
	rc := new(fasthttp.RequestCtx)
	rc.Init(&req, peer, nil)
	s.handler(rc)
	return connectapi.Answer{
		Status:     rc.Response.StatusCode(),
		RetryAfter: string(rc.Response.Header.Peek("Retry-After")),
		RequestID:  string(rc.Response.Header.Peek(wire.RequestIDHeader)),
		Replayed:   len(rc.Response.Header.Peek(wire.IdempotencyReplayedHeader)) > 0,
		Drain:      string(rc.Response.Header.Peek(wire.WorkerDrainHeader)) == "true",
		Body:       append([]byte(nil), rc.Response.Body()...),
	}
}

const fiberJSON = "application/json"

// GRPCAddr is where the gRPC services are served; empty without
// Config.GRPCAddr or before Start.
func (s *Server) GRPCAddr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.grpcLn == nil {
		return ""
	}
	return s.grpcLn.Addr().String()
}

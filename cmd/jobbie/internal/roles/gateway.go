package roles

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/jobbie/jobbie/cmd/jobbie/internal/rolelog"
	"github.com/jobbie/jobbie/cmd/jobbie/internal/settings"
	"github.com/jobbie/jobbie/gateway"
	"github.com/jobbie/jobbie/internal/gossip"
	"github.com/jobbie/jobbie/internal/pki"
)

type gatewayOptions struct {
	httpAddr, controlURL, metricsAddr, name, pprofAddr, consoleDir string
	tunnelAddr, selfHostedCAFile, grpcAddr, grpcPublicURL          string
	grpcKeepAlive, grpcScalerPoll                                  time.Duration
	traceShare                                                     bool // --trace-share-system
	trustPush                                                      time.Duration
	public                                                         publicTLSFlags
	gossip                                                         roleGossip
	limits                                                         gatewayLimits
	tls                                                            roleTLS
	log                                                            rolelog.Options
}

// gatewayLimits are the gateway's flags for abuse and freshness.
type gatewayLimits struct {
	connsPerAddr, longPollsPerKey, longPollsPerTenant int
	revocationMaxAge                                  time.Duration
	sessionIdle, sessionMax                           time.Duration
	conns, tunnelHandshakes, tunnelHandshakesPerAddr  int
	tunnelHandshakeTimeout                            time.Duration
}

func (l *gatewayLimits) flags(f *pflag.FlagSet) {
	d := gateway.Config{}.WithDefaults()
	f.IntVar(&l.connsPerAddr, "max-conns-per-addr", d.MaxConnsPerAddr, "open connections one client address may hold; the next get 429 connection_limit (-1: no limit; raise it behind a proxy or NAT)")
	f.IntVar(&l.conns, "max-conns", d.MaxConns, "open connections the public port holds from all clients together; the next are closed at once (default from the descriptor limit, leaving room for the other ports and calls; -1: no limit)")
	f.DurationVar(&l.tunnelHandshakeTimeout, "tunnel-handshake-timeout", d.TunnelHandshakeTimeout, "a connection to the tunnel listener that has not finished its TLS handshake by then is closed")
	f.IntVar(&l.tunnelHandshakes, "tunnel-max-handshakes", d.TunnelMaxHandshakes, "connections to the tunnel listener still in their handshake, from all addresses; the next are closed at once (default from the descriptor limit; -1: no limit)")
	f.IntVar(&l.tunnelHandshakesPerAddr, "tunnel-max-handshakes-per-addr", d.TunnelMaxHandshakesPerAddr, "connections to the tunnel listener still in their handshake from one address (an IPv6 /64); the next are closed at once (-1: no limit)")
	f.IntVar(&l.longPollsPerKey, "max-long-polls-per-key", d.MaxLongPollsPerKey, "fetches one API key may have waiting on this gateway; the next get 429 key_long_poll_limit (-1: no limit)")
	f.IntVar(&l.longPollsPerTenant, "max-long-polls-per-tenant", d.MaxLongPollsPerTenant, "fetches one tenant may have waiting on this gateway; the next get 429 tenant_long_poll_limit (-1: no limit)")
	f.DurationVar(&l.revocationMaxAge, "revocation-max-age", d.RevocationMaxAge, "refuse every key (503 revocations_stale) once the revocation list has not been refreshed from control for this long")
	f.DurationVar(&l.sessionIdle, "session-idle-timeout", d.SessionIdleTimeout, "a console session no request has used for this long ends (each request of the session moves its end on)")
	f.DurationVar(&l.sessionMax, "session-max-age", d.SessionMaxAge, "a console session ends this long after sign-in, however active")
	// A limit of 0 would read as the default, so it is refused rather
	// than silently meaning something else.
	for _, name := range []string{"max-conns-per-addr", "max-conns", "tunnel-max-handshakes", "tunnel-max-handshakes-per-addr", "max-long-polls-per-key", "max-long-polls-per-tenant"} {
		settings.Range(f, name, "-1", "")
		settings.Except(f, name, "0")
	}
	settings.DocDefault(f, "max-conns", "from the descriptor limit")
	settings.DocDefault(f, "tunnel-max-handshakes", "from the descriptor limit")
	settings.Range(f, "tunnel-handshake-timeout", positive, "")
	settings.Range(f, "revocation-max-age", positive, "")
	settings.Range(f, "session-idle-timeout", "1s", "")
	settings.Range(f, "session-max-age", "1s", "")
}

// positive is the least of a duration that must be positive.
const positive = "1ms"

// publicTLSFlags are a public listener's own certificate and key
// (gateway.Config.PublicCertFile): a server certificate clients trust,
// not one of the deployment's CA.
type publicTLSFlags struct{ cert, key string }

// scheme is the listener's URL scheme.
func (p publicTLSFlags) scheme() string {
	if p.cert != "" {
		return "https"
	}
	return "http"
}

func (p *publicTLSFlags) flags(f *pflag.FlagSet, prefix, what string) {
	f.StringVar(&p.cert, prefix+"-cert", "", "serve "+what+" over TLS with this certificate (PEM, reloaded when the file changes; with --"+prefix+"-key)")
	f.StringVar(&p.key, prefix+"-key", "", "the private key of --"+prefix+"-cert")
}

// grpcAddrFlag is --grpc-addr: the gateway's gRPC and Connect listener;
// --grpc-public-url, the URL GET /api/v1/info gives clients for it;
// --grpc-keepalive, how often its idle worker streams hear from it; and
// --grpc-scaler-poll, how often KEDA's StreamIsActive streams read their
// queue.
func grpcAddrFlag(f *pflag.FlagSet, v, publicURL *string, keepAlive, scalerPoll *time.Duration, how string) {
	f.StringVar(v, "grpc-addr", "", "serve JobService, AdminService, WorkerService and KEDA's ExternalScaler over gRPC, gRPC-Web and Connect here, host:port ("+how+"; default: not served)")
	f.StringVar(publicURL, "grpc-public-url", "", "the URL clients reach --grpc-addr at, which GET /api/v1/info tells them (the Go SDK's workers find the stream there); default: --grpc-addr's, with the host a client asked for in place of an unspecified one")
	f.DurationVar(keepAlive, "grpc-keepalive", gateway.Config{}.WithDefaults().GRPCKeepAlive,
		"a worker stream that has sent nothing for this long gets a keep-alive frame, for proxies that close idle streams")
	f.DurationVar(scalerPoll, "grpc-scaler-poll", gateway.Config{}.WithDefaults().GRPCScalerPoll,
		"how often a KEDA StreamIsActive stream (the external-push trigger) reads its queue; each read is a request of the trigger's API key")
	settings.Range(f, "grpc-scaler-poll", "100ms", "")
}

// trustPushFlag is --trust-push-interval, of gateways with a tunnel listener.
func trustPushFlag(f *pflag.FlagSet, v *time.Duration) {
	f.DurationVar(v, "trust-push-interval", gateway.Config{}.WithDefaults().TrustPushInterval,
		"how often self-hosted nodes connected to the tunnel listener get their trust bundle again (a key revoked reaches their local API within about this)")
	settings.Range(f, "trust-push-interval", positive, "")
}

// apply sets the limits on cfg (their ranges were checked with the
// role's settings).
func (l gatewayLimits) apply(cfg *gateway.Config) {
	cfg.MaxConns, cfg.TunnelMaxHandshakes, cfg.TunnelMaxHandshakesPerAddr = l.conns, l.tunnelHandshakes, l.tunnelHandshakesPerAddr
	cfg.TunnelHandshakeTimeout = l.tunnelHandshakeTimeout
	cfg.MaxConnsPerAddr, cfg.MaxLongPollsPerKey, cfg.MaxLongPollsPerTenant = l.connsPerAddr, l.longPollsPerKey, l.longPollsPerTenant
	cfg.RevocationMaxAge = l.revocationMaxAge
	cfg.SessionIdleTimeout, cfg.SessionMaxAge = l.sessionIdle, l.sessionMax
}

// gatewayCmd is `jobbie gateway`: a stateless front door, as many as you
// like, for running the roles apart (docs/operate/running-the-roles.md).
func gatewayCmd() *cobra.Command {
	var o gatewayOptions
	cmd := &cobra.Command{
		Use:   "gateway",
		Short: "Run a gateway (the public API: keys, roles, routing to shard leaders)",
		Long: `gateway serves the public API: it checks API keys (signed by control) and
roles, then sends each request to the leader of the shard cluster its
namespace is placed on. Placements come from control; leaders come from the
gossip pool, which the gateway joins as role "gateway". While a shard elects
a leader, requests are retried for up to 5 seconds before a 503 with
Retry-After.

It reaches control and shards over mutual TLS with its gateway
certificate, and sends a tenant's request only to a node whose certificate
shows the shard the namespace is placed on: gossip says where a leader is,
never who it is. SIGHUP rereads the certificate and the gossip keys.

With --tunnel it also listens for self-hosted shard nodes (a tenant's own
shard in its own network), which dial out to it with certificates of the
self-hosted CA (--selfhosted-ca-file, trusted on this listener only); it
admits a node while control lists its shard for the tenant its
certificate names, and reaches namespaces placed there over that
connection.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return runGateway(ctx, o, cmd.OutOrStdout())
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.httpAddr, "http", "127.0.0.1:8080", "HTTP listen address (the public API)")
	f.StringVar(&o.controlURL, "control", "", "control plane base URLs: one or more, comma-separated, each https, e.g. https://10.0.0.5:8081 (required)")
	f.StringVar(&o.consoleDir, "console-dir", "", "serve the console's front end from this directory instead of the embedded one")
	f.StringVar(&o.metricsAddr, "metrics-addr", "", "serve /metrics here, over TLS to metrics and operator certificates (default: no metrics)")
	traceShareFlag(f, &o.traceShare)
	grpcAddrFlag(f, &o.grpcAddr, &o.grpcPublicURL, &o.grpcKeepAlive, &o.grpcScalerPoll, "over TLS with --public-tls-cert, else h2c")
	f.StringVar(&o.name, "name", "", "gossip name, unique in the pool (default gateway-<host>-<http port>)")
	f.StringVar(&o.pprofAddr, "pprof-addr", "", "serve Go profiling (net/http/pprof) on this address")
	f.StringVar(&o.tunnelAddr, "tunnel", "", "listen here for self-hosted shard nodes' tunnels, host:port (needs --selfhosted-ca-file)")
	f.StringVar(&o.selfHostedCAFile, "selfhosted-ca-file", "", "the CA of self-hosted shards' certificates (control's --selfhosted-ca-dir ca.crt)")
	trustPushFlag(f, &o.trustPush)
	o.public.flags(f, "public-tls", "the public API")
	o.gossip.flags(f, "127.0.0.1:7947")
	o.limits.flags(f)
	o.tls.flags(f)
	o.log.Flags(f, "info")
	_ = cmd.MarkFlagRequired("control")
	settings.Install(cmd, "gateway")
	return cmd
}

func runGateway(ctx context.Context, o gatewayOptions, out io.Writer) error {
	creds, err := o.tls.load(pki.RoleGateway)
	if err != nil {
		return err
	}
	cfg := gateway.Config{Addr: o.httpAddr, ControlURL: o.controlURL, TLS: creds, MetricsAddr: o.metricsAddr, ConsoleDir: o.consoleDir,
		TunnelAddr: o.tunnelAddr, TrustPushInterval: o.trustPush, PublicCertFile: o.public.cert, PublicKeyFile: o.public.key,
		GRPCAddr: o.grpcAddr, GRPCPublicURL: o.grpcPublicURL, GRPCKeepAlive: o.grpcKeepAlive, GRPCScalerPoll: o.grpcScalerPoll, TraceShareSystem: o.traceShare}
	if o.selfHostedCAFile != "" {
		if cfg.SelfHostedCA, err = os.ReadFile(o.selfHostedCAFile); err != nil {
			return err
		}
	}
	o.limits.apply(&cfg)
	if o.pprofAddr != "" {
		if err := servePprof(o.pprofAddr); err != nil {
			return err
		}
	}
	if o.name == "" {
		o.name = defaultGatewayName(o.httpAddr)
	}
	logger := o.log.New(os.Stderr)
	pool, err := o.gossip.start(o.name, gossip.Meta{Role: gossip.RoleGateway, Version: roleVersion()}, logger)
	if err != nil {
		return err
	}
	defer leavePool(pool)
	go o.gossip.keepJoined(ctx, pool, logger)
	go reloadOnHUP(ctx, creds, pool, o.gossip.keyFile, logger)

	cfg.Gossip, cfg.Logger = pool, logger
	gw, err := gateway.New(cfg)
	if err != nil {
		return err
	}
	if err := gw.Start(ctx); err != nil {
		return err
	}
	defer gw.Stop()
	if err := pool.UpdateMeta(func(m *gossip.Meta) { m.HTTPAddr = gw.Addr() }); err != nil {
		logger.Warn("gateway: gossip metadata update", "err", err)
	}
	fmt.Fprintf(out, "jobbie gateway: listening on %s://%s (control %s, gossip %s)\n", o.public.scheme(), gw.Addr(), o.controlURL, pool.Addr())
	if a := gw.TunnelAddr(); a != "" {
		fmt.Fprintf(out, "jobbie gateway: self-hosted shards' tunnels on %s\n", a)
	}
	if a := gw.GRPCAddr(); a != "" {
		fmt.Fprintf(out, "jobbie gateway: gRPC and Connect (JobService, AdminService) on %s\n", a)
	}
	select {
	case <-gw.Ready():
		fmt.Fprintln(out, "jobbie gateway: ready")
	case <-ctx.Done():
	}
	<-ctx.Done()
	fmt.Fprintln(out, "jobbie gateway: shutting down")
	return nil
}

// defaultGatewayName is unique for gateways on different hosts, and on
// one host for different HTTP ports.
func defaultGatewayName(httpAddr string) string {
	host, _ := os.Hostname()
	port := httpAddr[strings.LastIndexByte(httpAddr, ':')+1:]
	return "gateway-" + host + "-" + port
}

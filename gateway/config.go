package gateway

import (
	"crypto/x509"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/jobbie/jobbie/gateway/controlapi"
	"github.com/jobbie/jobbie/internal/gossip"
	"github.com/jobbie/jobbie/internal/listen"
	"github.com/jobbie/jobbie/internal/pki"
)

// Config configures a gateway. Zero fields take the defaults named in their
// comments; ControlURL and TLS are required.
type Config struct {
	// Addr is the listen address. Default "127.0.0.1:8080"; a port of 0
	// picks a free one (see Server.Addr).
	Addr string
	// PublicCertFile and PublicKeyFile, when set (both or neither), make
	// Addr speak TLS with this server certificate (publictls.go), reloaded
	// when the files change; else it speaks plain HTTP.
	PublicCertFile, PublicKeyFile string
	// GRPCAddr, when set, is where JobService, AdminService and
	// WorkerService are served over Connect: gRPC, gRPC-Web and the Connect protocol, on HTTP/2
	// (over TLS with PublicCertFile's certificate when set, else h2c) and
	// HTTP/1.1 (grpc.go). A port of 0 picks a free one (Server.GRPCAddr).
	// "" serves none.
	GRPCAddr string
	// GRPCPublicURL is the gRPC port's URL as clients reach it
	// ("https://grpc.jobbie.example.com:443"), which GET /api/v1/info
	// tells them, so that the Go SDK's workers find the worker stream on
	// their own. Default: GRPCAddr's, once listening, as https:// with
	// the public certificate, else http://, with the host the client
	// asked for in place of an unspecified one (":9090"). Unused without
	// GRPCAddr.
	GRPCPublicURL string
	// GRPCMaxConns caps the connections open on GRPCAddr at once, apart
	// from MaxConns; each carries many calls. Default 1024; negative for
	// no cap.
	GRPCMaxConns int
	// GRPCKeepAlive is how long a worker stream (WorkerService.Work) may
	// send nothing before the gateway sends it a keep-alive frame, for
	// proxies that close idle streams. Default 15s.
	GRPCKeepAlive time.Duration
	// GRPCScalerPoll is how often a KEDA StreamIsActive stream reads its
	// queue (each read is a request of the trigger's key). Default 5s.
	GRPCScalerPoll time.Duration
	// ControlURL is the base URL of a control node, e.g.
	// "https://10.0.0.5:7070", or of several, comma-separated; the gateway
	// fails over between them (internal/controlclient).
	ControlURL string
	// TLS is this gateway's identity: it reaches control and shards over
	// mutual TLS, and checks that whom it reached is control, or a member
	// of the shard it meant, whatever address gossip gave. A shard on a
	// Unix socket ("unix:<path>") is reached without TLS and without
	// credentials: its socket's permissions guard it, and the shard takes
	// a peer there for its local gateway.
	TLS *pki.Credentials
	// TunnelAddr, when set, is where self-hosted shard nodes dial in
	// (package selfhosted); SelfHostedCA (PEM) is the CA their certificates must
	// come from, trusted on that listener only. Both or neither.
	TunnelAddr   string
	SelfHostedCA []byte
	// Local, when set, makes this gateway a self-hosted shard node's local
	// API (selfhosted/local.go): it then has no ControlURL, TLS, tunnel listener,
	// gossip or metrics listener, and RevocationMaxAge bounds how long it
	// serves on without a trust bundle from the hosted service.
	Local *LocalTrust
	// TrustPushInterval is how often self-hosted nodes connected to this
	// gateway's tunnel listener are sent their trust bundle again
	// (selfhosted/trustpush.go): a key revoked reaches their local API within about
	// this long. Default 10s.
	TrustPushInterval time.Duration
	// MetricsAddr is where /metrics is served, over mutual TLS, to
	// scrapers' certificates (pki.Scrapers); "" serves no metrics. They
	// are never on Addr.
	MetricsAddr string
	// TraceShareSystem puts the gateway's own spans in the tenant's trace
	// (children of its traceparent) rather than in traces of the
	// operator's own (--trace-share-system). Spans are exported when the
	// OTEL_* variables name an OTLP endpoint (internal/tracing.FromEnv).
	TraceShareSystem bool

	// BodyLimit caps request bodies in bytes. Default 1 MiB.
	BodyLimit int
	// BatchBodyLimit caps the bodies of enqueue/batch and ack/batch. Default 16 MiB.
	BatchBodyLimit int

	// RevocationInterval is how often the revocation list is polled. Default 1s.
	RevocationInterval time.Duration
	// RevocationMaxAge is the freshness bound of the revocation list: once
	// the last list fetched is older (control unreachable), every key is
	// refused with 503 revocations_stale, rather than honouring keys that
	// may have been revoked since, until a fetch succeeds. It must exceed
	// RevocationInterval. Default 60s.
	RevocationMaxAge time.Duration
	// SessionIdleTimeout ends a console session no request has used for
	// this long (each request moves its end on). Default 30m.
	SessionIdleTimeout time.Duration
	// SessionMaxAge ends a console session this long after sign-in,
	// however active. Default 12h.
	SessionMaxAge time.Duration
	// SSOAllowPrivate lets console sign-in's calls to a tenant's identity
	// provider (discovery, token, keys, userinfo) reach loopback, private
	// and link-local addresses: tests and local development only, as it
	// lets tenants reach this network. Default false.
	SSOAllowPrivate bool
	// SSOSignInsPerAddress and SSOSignInsPerTenant bound the steps of
	// console sign-in through an identity provider (its start and its
	// callback, unauthenticated, each a control lookup and calls to the
	// provider) a minute per client address and per tenant; past them a
	// step is 429 with Retry-After. Negative: no limit. Defaults 30 and
	// 600.
	SSOSignInsPerAddress, SSOSignInsPerTenant int
	// SSORootCAs verifies identity providers' certificates; nil: the
	// system's roots.
	SSORootCAs *x509.CertPool
	// ConsolePublicURL is the gateway's address as browsers reach it
	// ("https://jobs.example.com"), under which the console's SSO callback
	// is (the redirect URI tenants register at their provider); empty:
	// each request's own scheme and host.
	ConsolePublicURL string
	// JWKSInterval is how often the signing keys are refreshed. Default 1m.
	JWKSInterval time.Duration
	// JWKSMinRefresh is the least time between two JWKS fetches caused by
	// keys with an unknown kid, so forged kids cannot flood control. Default 1s.
	JWKSMinRefresh time.Duration
	// KeyUsageInterval is how often the gateway reports to control the API
	// keys it admitted since its last report, which control records as
	// their last_used_at; a key's last_used_at so trails its last use by
	// up to about this long, plus the report's way. Default 30s.
	KeyUsageInterval time.Duration
	// UsagePushInterval is how often the gateway pushes to control the
	// requests it admitted per tenant and hour (the api_requests meter);
	// it also pushes when it stops, so a crash loses at most this long's
	// counts. Default 5s.
	UsagePushInterval time.Duration
	// PlanRefreshInterval is how often the plan of each tenant served is
	// fetched again from control (limits/plans.go): a plan's new limits apply
	// within about this long. Default 10s.
	PlanRefreshInterval time.Duration
	// PlanFetchWait is how long a tenant's first request waits for its
	// plan; past it, or while control does not answer, the tenant is
	// admitted without rate limits until its plan is known. Default 1s.
	PlanFetchWait time.Duration
	// RateLimitSyncInterval is how often gateways tell each other their
	// demand on each rate-limited tenant and divide its limits anew
	// (limits/sync.go); a gateway's share returns to the others within
	// eight of these after it stops. Default 250ms.
	RateLimitSyncInterval time.Duration
	// PlacementTTL is how long a namespace's shard is cached. Default 30s.
	PlacementTTL time.Duration
	// PlacementMissTTL is how long "no such namespace" is cached, and how
	// soon a namespace whose shard failed is looked up again. Default 1s.
	PlacementMissTTL time.Duration

	// TokenCacheSize bounds the verified-key cache. Default 100000.
	TokenCacheSize int
	// DecisionCacheSize bounds the RBAC decision cache. Default 10000.
	DecisionCacheSize int
	// PlacementCacheSize bounds the placement cache. Default 100000.
	PlacementCacheSize int

	// ControlTimeout bounds each call to the control plane. Default 5s.
	ControlTimeout time.Duration
	// ShardTimeout is how long a shard may take to answer, added to a
	// fetch's long-poll wait (wire.FetchWait: the bounds every hop
	// shares). Default 10s.
	ShardTimeout time.Duration
	// LeaderRetryTimeout bounds how long a request is retried while its
	// shard has no leader or the leader moved (shardclient.Do) before the
	// client gets 503 with Retry-After. Default 5s.
	LeaderRetryTimeout time.Duration
	// Gossip, when set, is the pool this gateway has joined: each shard's
	// requests go to the leader it advertises. Without it they go to the
	// addresses control gives. The caller owns the pool.
	Gossip *gossip.Pool
	// ShardMaxConns caps connections to one shard address; every waiting
	// long-poll holds one. Default 16384.
	ShardMaxConns int

	// MaxConnsPerAddr caps the open connections from one client address
	// (IPv4 address, or IPv6 /64); the ones over it get 429 connection_limit
	// and are closed. Behind a proxy or NAT every client shares its
	// address: raise it there. Default 1024; negative for no limit.
	MaxConnsPerAddr int
	// MaxConns caps the connections open on Addr at once, from all
	// clients together; the next are closed as soon as they are accepted,
	// so a flood from many addresses cannot spend the descriptors the
	// gateway's other ports and its calls to shards and control need.
	// Default listen.ProcessBudget().Public: the process's descriptor
	// limit less a quarter (at least 128) and the tunnel's and Raft's
	// handshake caps. Negative for no cap.
	MaxConns int
	// TunnelHandshakeTimeout bounds a tunnel connection's TLS handshake,
	// after which it is closed. Default listen.DefaultHandshakeTimeout
	// (5s).
	TunnelHandshakeTimeout time.Duration
	// TunnelMaxHandshakes and TunnelMaxHandshakesPerAddr cap the tunnel
	// connections that have not finished their handshake, in all and per
	// client address (an IPv6 one per /64); the next are closed at once.
	// A node's established tunnel does not count. Defaults
	// listen.ProcessBudget().Pending and listen.DefaultMaxPendingPerAddr
	// (16); negative for no cap.
	TunnelMaxHandshakes, TunnelMaxHandshakesPerAddr int
	// Listeners is the group /readyz asks: it fails while any listener
	// of the group cannot accept connections. A process running several
	// roles passes them one (`jobbie dev`). Default: the gateway's own.
	Listeners *listen.Group
	// MaxLongPollsPerKey caps the fetches (fetch and fetch/batch) one API
	// key may have waiting on this gateway at once; the one over it gets
	// 429 key_long_poll_limit. Each holds a client connection and a shard
	// connection. Default 1000; negative for no limit.
	MaxLongPollsPerKey int
	// MaxLongPollsPerTenant is the same cap for all of a tenant's keys
	// together (429 tenant_long_poll_limit). Default 2000; negative for
	// no limit.
	MaxLongPollsPerTenant int

	// ReadTimeout bounds reading a client's request. Default 30s.
	ReadTimeout time.Duration
	// WriteTimeout bounds writing a response to a client. Default 30s.
	WriteTimeout time.Duration
	// IdleTimeout closes idle client keep-alive connections. Default 2m.
	IdleTimeout time.Duration
	// ShutdownTimeout bounds Stop's wait for requests in flight. Waiting
	// fetches (long-polls) are answered with no job at once, not waited
	// for (proxy/longpoll.go). Default 40s.
	ShutdownTimeout time.Duration

	// Logger receives operational logs. Default slog.Default().
	Logger *slog.Logger
	// Clock tells the time for the caches' expiry, key expiry, the
	// refresh loops and request metrics; tests pass a fake one. Deadlines
	// handed to the network (shard requests, client writes) and the leader
	// retry budget stay on the wall clock. Default clockwork.NewRealClock().
	Clock clockwork.Clock

	// ConsoleDir serves the console's front end from this directory (a
	// `vite build` output) instead of the one embedded in the binary: for
	// working on the console without rebuilding jobbie. Read once at New.
	ConsoleDir string

	// consoleDist replaces the embedded console front end (tests).
	consoleDist fs.FS
	// control replaces control (tests: gateway/internal/controlfake).
	control controlapi.Control
	// listen replaces net.Listen for Addr (tests).
	listen func(network, addr string) (net.Listener, error)
	// retryBackoff is the shard client's first pause between tries
	// (tests; shardclient.FirstRetryBackoff when zero).
	retryBackoff time.Duration
	// workWait replaces how long a request waits for a work slot (tests;
	// workWait when zero).
	workWait time.Duration
}

const mib = 1 << 20

// capOf is a cap for listen.Config: a negative one, no cap, is 0 there.
func capOf(n int) int { return max(n, 0) }

// WithDefaults returns a copy of c with zero fields set to their defaults.
func (c Config) WithDefaults() Config {
	setDefault(&c.Addr, "127.0.0.1:8080")
	setDefault(&c.BodyLimit, 1*mib)
	setDefault(&c.BatchBodyLimit, 16*mib)
	setDefault(&c.RevocationInterval, time.Second)
	setDefault(&c.RevocationMaxAge, time.Minute)
	setDefault(&c.TrustPushInterval, 10*time.Second)
	setDefault(&c.SessionIdleTimeout, 30*time.Minute)
	setDefault(&c.SessionMaxAge, 12*time.Hour)
	setDefault(&c.SSOSignInsPerAddress, 30)
	setDefault(&c.SSOSignInsPerTenant, 600)
	setDefault(&c.JWKSInterval, time.Minute)
	setDefault(&c.JWKSMinRefresh, time.Second)
	setDefault(&c.KeyUsageInterval, 30*time.Second)
	setDefault(&c.UsagePushInterval, 5*time.Second)
	setDefault(&c.PlanRefreshInterval, 10*time.Second)
	setDefault(&c.PlanFetchWait, time.Second)
	setDefault(&c.RateLimitSyncInterval, 250*time.Millisecond)
	setDefault(&c.PlacementTTL, 30*time.Second)
	setDefault(&c.PlacementMissTTL, time.Second)
	setDefault(&c.TokenCacheSize, 100_000)
	setDefault(&c.DecisionCacheSize, 10_000)
	setDefault(&c.PlacementCacheSize, 100_000)
	setDefault(&c.ControlTimeout, 5*time.Second)
	setDefault(&c.ShardTimeout, 10*time.Second)
	setDefault(&c.LeaderRetryTimeout, 5*time.Second)
	setDefault(&c.ShardMaxConns, 16384)
	setDefault(&c.MaxConnsPerAddr, 1024)
	setDefault(&c.GRPCMaxConns, 1024)
	setDefault(&c.GRPCKeepAlive, 15*time.Second)
	setDefault(&c.GRPCScalerPoll, 5*time.Second)
	budget := listen.ProcessBudget()
	setDefault(&c.MaxConns, budget.Public)
	setDefault(&c.TunnelHandshakeTimeout, listen.DefaultHandshakeTimeout)
	setDefault(&c.TunnelMaxHandshakes, budget.Pending)
	setDefault(&c.TunnelMaxHandshakesPerAddr, listen.DefaultMaxPendingPerAddr)
	setDefault(&c.MaxLongPollsPerKey, 1000)
	setDefault(&c.MaxLongPollsPerTenant, 2000)
	setDefault(&c.ReadTimeout, 30*time.Second)
	setDefault(&c.WriteTimeout, 30*time.Second)
	setDefault(&c.IdleTimeout, 2*time.Minute)
	setDefault(&c.ShutdownTimeout, 40*time.Second)
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Clock == nil {
		c.Clock = clockwork.NewRealClock()
	}
	return c
}

func setDefault[T comparable](field *T, def T) {
	var zero T
	if *field == zero {
		*field = def
	}
}

// Validate reports the first problem with a defaulted config.
func (c Config) Validate() error {
	if c.Local != nil {
		if err := c.validateLocal(); err != nil {
			return err
		}
		return c.validateLimits()
	}
	if err := checkControlURLs(c.ControlURL); err != nil {
		return err
	}
	if (c.TunnelAddr == "") != (len(c.SelfHostedCA) == 0) {
		return errors.New("gateway: a tunnel listener needs the self-hosted CA, and the CA a listener")
	}
	switch {
	case c.TLS == nil:
		return errors.New("gateway: TLS is required: the gateway's certificate is how control and shards know it")
	case c.TLS.Identity().Role != pki.RoleGateway:
		return fmt.Errorf("gateway: TLS is the certificate of %s, not of a gateway", c.TLS.Identity())
	}
	return c.validateLimits()
}

// validateLimits checks the sizes, intervals and bounds.
func (c Config) validateLimits() error {
	if (c.PublicCertFile == "") != (c.PublicKeyFile == "") {
		return errors.New("gateway: public TLS needs both a certificate file and a key file")
	}
	if err := checkGRPCPublicURL(c.GRPCPublicURL); err != nil {
		return err
	}
	if err := checkConsolePublicURL(c.ConsolePublicURL); err != nil {
		return err
	}
	if c.BodyLimit < 0 || c.BatchBodyLimit < 0 {
		return errors.New("gateway: body limits must be positive")
	}
	if c.RevocationInterval < 0 || c.JWKSInterval < 0 || c.PlacementTTL < 0 || c.ShardTimeout < 0 || c.LeaderRetryTimeout < 0 ||
		c.KeyUsageInterval < 0 || c.TrustPushInterval < 0 || c.UsagePushInterval < 0 || c.PlanRefreshInterval < 0 || c.PlanFetchWait < 0 || c.RateLimitSyncInterval < 0 ||
		c.TunnelHandshakeTimeout < 0 || c.SessionIdleTimeout < 0 || c.SessionMaxAge < 0 {
		return errors.New("gateway: intervals and timeouts must be positive")
	}
	if c.RevocationMaxAge <= c.RevocationInterval {
		return fmt.Errorf("gateway: RevocationMaxAge (%s) must exceed RevocationInterval (%s)", c.RevocationMaxAge, c.RevocationInterval)
	}
	if c.TokenCacheSize < 0 || c.DecisionCacheSize < 0 || c.PlacementCacheSize < 0 {
		return errors.New("gateway: cache sizes must be positive")
	}
	return nil
}

// checkControlURLs checks ControlURL: one control node's base URL or
// several, comma-separated, each an https URL with a host.
func checkControlURLs(list string) error {
	if strings.TrimSpace(list) == "" {
		return errors.New("gateway: ControlURL is required: one or more https URLs of control nodes, comma-separated")
	}
	for _, part := range strings.Split(list, ",") {
		part = strings.TrimSpace(part)
		u, err := url.Parse(part)
		if err != nil || u.Scheme != "https" || u.Host == "" {
			return fmt.Errorf("gateway: ControlURL %q must be an https URL (or several, comma-separated): control is reached over mutual TLS", part)
		}
	}
	return nil
}

package tunnel

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/yamux"

	"github.com/jobbie/jobbie/internal/pki"
)

// AgentConfig configures an Agent. Zero values take the defaults in
// comments.
type AgentConfig struct {
	// Addr is the hosted tunnel endpoint, host:port. Required.
	Addr string
	// TLS is the node's credentials: a shard certificate, whose shard and
	// node name the tunnel at the hosted end. Required.
	TLS *pki.Credentials
	// Expect admits the hosted endpoint's certificate; default: a
	// gateway's (the endpoint is the gateway's tunnel listener).
	Expect pki.Policy
	// Handler, when set, serves every stream (Run runs an http.Server on
	// Listener; requests carry the tunnel's TLS state in r.TLS). Without
	// it the caller serves Listener, e.g. with the node's fiber app.
	Handler http.Handler
	// MinBackoff is the first pause after a failure, doubling on each
	// failure to MaxBackoff, with jitter; defaults 250ms and 30s.
	MinBackoff time.Duration
	MaxBackoff time.Duration
	// DialTimeout bounds connecting: TCP, TLS, and the hosted side's
	// first answer (which proves it admitted the certificate). Default 10s.
	DialTimeout time.Duration
	// KeepAliveInterval and KeepAliveTimeout: see RegistryConfig.
	KeepAliveInterval time.Duration
	KeepAliveTimeout  time.Duration
	Logger            *slog.Logger // default slog.Default()
}

func (c AgentConfig) withDefaults() AgentConfig {
	if c.Expect == nil {
		c.Expect = pki.Roles(pki.RoleGateway)
	}
	if c.MinBackoff <= 0 {
		c.MinBackoff = 250 * time.Millisecond
	}
	if c.MaxBackoff <= 0 {
		c.MaxBackoff = 30 * time.Second
	}
	c.MaxBackoff = max(c.MaxBackoff, c.MinBackoff)
	if c.DialTimeout <= 0 {
		c.DialTimeout = 10 * time.Second
	}
	if c.KeepAliveInterval <= 0 {
		c.KeepAliveInterval = defaultKeepAliveInterval
	}
	if c.KeepAliveTimeout <= 0 {
		c.KeepAliveTimeout = defaultKeepAliveTimeout
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c
}

// stableAfter is how long a session must have lasted for the backoff to
// start again from MinBackoff: a hosted side that admits and then drops
// the agent at once must not be redialed four times a second.
const stableAfter = 10 * time.Second

// AgentState is an agent's health.
type AgentState struct {
	Connected bool
	// Since is when the tunnel last connected or, while it is down, when
	// it went down (or the agent started).
	Since time.Time
	// Reconnects counts sessions established after the first.
	Reconnects int
	// FailedAttempts counts failed connection attempts since the last
	// session was established.
	FailedAttempts int
	// LastError is why the last attempt failed or the last session ended.
	LastError   string
	LastErrorAt time.Time
}

// Agent keeps a self-hosted shard node's tunnel to the hosted service.
type Agent struct {
	cfg     AgentConfig
	ln      *listener
	change  notifier
	started atomic.Bool

	mu       sync.Mutex
	state    AgentState
	sessions int
}

// NewAgent checks cfg and returns an agent; Run connects it.
func NewAgent(cfg AgentConfig) (*Agent, error) {
	if cfg.Addr == "" {
		return nil, errors.New("tunnel: the agent needs the hosted endpoint's address")
	}
	if cfg.TLS == nil {
		return nil, errors.New("tunnel: the agent needs the node's TLS credentials")
	}
	id := cfg.TLS.Identity()
	if id.Role != pki.RoleShard {
		return nil, fmt.Errorf("tunnel: the agent's certificate is for %s, not a shard node", id)
	}
	a := &Agent{cfg: cfg.withDefaults(), ln: newListener(nodeAddr{id.Shard, id.Node})}
	a.state.Since = time.Now()
	return a, nil
}

// Listener yields the streams the hosted side opens, as connections to
// serve HTTP on (fiber's App.Listener, fasthttp's Server.Serve). Their
// conns report the tunnel's TLS state, so pki.Require sees the hosted
// peer. Closing it ends Run.
func (a *Agent) Listener() net.Listener { return a.ln }

// State is the agent's health now.
func (a *Agent) State() AgentState {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.state
}

// Changed is closed at the agent's next change of state: take it, then
// read State, then wait on it.
func (a *Agent) Changed() <-chan struct{} { return a.change.wait() }

// Run keeps the tunnel up until ctx ends or Listener is closed, then
// closes the session and Listener and returns. It runs once per Agent.
func (a *Agent) Run(ctx context.Context) error {
	if !a.started.CompareAndSwap(false, true) {
		return errors.New("tunnel: the agent runs once")
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-a.ln.done:
			cancel()
		case <-ctx.Done():
		}
	}()
	defer a.ln.Close()
	if a.cfg.Handler != nil {
		srv := &http.Server{Handler: withTLS(a.cfg.Handler), ConnContext: withConn,
			ErrorLog: slog.NewLogLogger(a.cfg.Logger.Handler(), slog.LevelWarn)}
		served := make(chan struct{})
		go func() { _ = srv.Serve(a.ln); close(served) }()
		defer func() { _ = srv.Close(); <-served }()
	}
	backoff := a.cfg.MinBackoff
	for {
		mux, cc, state, err := a.connect(ctx)
		if err == nil {
			began := time.Now()
			err = a.serve(ctx, mux, cc, state)
			if time.Since(began) >= stableAfter {
				backoff = a.cfg.MinBackoff
			}
		}
		if ctx.Err() != nil {
			a.setDown(nil)
			return nil
		}
		a.setDown(err)
		// Equal jitter: half the pause fixed, half random, so agents
		// dropped together do not all come back at the same instant.
		pause := backoff/2 + rand.N(backoff/2+1)
		backoff = min(2*backoff, a.cfg.MaxBackoff)
		t := time.NewTimer(pause)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			a.setDown(nil)
			return nil
		}
	}
}

// connect makes one session: TCP, TLS, then a ping. With TLS 1.3 the
// server refuses a client certificate after the client's handshake ended,
// so the answered ping is what proves the hosted side admitted this node.
func (a *Agent) connect(ctx context.Context) (*yamux.Session, *causeConn, *tls.ConnectionState, error) {
	ctx, cancel := context.WithTimeout(ctx, a.cfg.DialTimeout)
	defer cancel()
	var d net.Dialer
	raw, err := d.DialContext(ctx, "tcp", a.cfg.Addr)
	if err != nil {
		return nil, nil, nil, err
	}
	tc := tls.Client(raw, a.cfg.TLS.Client(a.cfg.Expect))
	if err := tc.HandshakeContext(ctx); err != nil {
		_ = raw.Close()
		return nil, nil, nil, err
	}
	state := tc.ConnectionState()
	cc := &causeConn{Conn: newCoalescer(tc)}
	// The agent only accepts streams: it is the yamux server.
	mux, err := yamux.Server(cc, muxConfig(a.cfg.KeepAliveInterval, a.cfg.KeepAliveTimeout, a.cfg.Logger))
	if err != nil {
		_ = cc.Close()
		return nil, nil, nil, err
	}
	stop := context.AfterFunc(ctx, func() { _ = mux.Close() })
	_, err = mux.Ping()
	stop()
	if err != nil {
		_ = mux.Close()
		if ctx.Err() != nil {
			return nil, nil, nil, fmt.Errorf("tunnel: the hosted side did not answer within %v", a.cfg.DialTimeout)
		}
		if cause := cc.cause(); cause != nil {
			err = cause
		}
		return nil, nil, nil, fmt.Errorf("tunnel: the hosted side did not admit the connection: %w", err)
	}
	return mux, cc, &state, nil
}

// serve hands mux's streams to Listener until the session ends (or ctx
// does), and returns why it ended.
func (a *Agent) serve(ctx context.Context, mux *yamux.Session, cc *causeConn, state *tls.ConnectionState) error {
	a.setUp()
	set := newStreams(mux, state)
	fed := make(chan struct{})
	go func() { a.ln.feed(set); close(fed) }()
	select {
	case <-mux.CloseChan():
	case <-ctx.Done():
	}
	set.close()
	<-fed
	if ctx.Err() != nil {
		return nil
	}
	if cause := cc.cause(); cause != nil && !errors.Is(cause, net.ErrClosed) {
		return fmt.Errorf("tunnel: the session ended: %w", cause)
	}
	return errors.New("tunnel: the session ended: keep-alive unanswered or closed by the hosted side")
}

func (a *Agent) setUp() {
	a.mu.Lock()
	a.sessions++
	a.state.Connected = true
	a.state.Since = time.Now()
	a.state.Reconnects = a.sessions - 1
	a.state.FailedAttempts = 0
	a.mu.Unlock()
	a.cfg.Logger.Info("tunnel: connected", "endpoint", a.cfg.Addr, "node", a.cfg.TLS.Identity().String())
	a.change.notify()
}

// setDown records a failed attempt or an ended session (err nil: the
// agent is stopping).
func (a *Agent) setDown(err error) {
	a.mu.Lock()
	if a.state.Connected {
		a.state.Connected = false
		a.state.Since = time.Now()
	} else if err != nil {
		a.state.FailedAttempts++
	}
	if err != nil {
		a.state.LastError = err.Error()
		a.state.LastErrorAt = time.Now()
	}
	a.mu.Unlock()
	if err != nil {
		a.cfg.Logger.Warn("tunnel: down", "endpoint", a.cfg.Addr, "err", err)
	}
	a.change.notify()
}

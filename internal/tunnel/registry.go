package tunnel

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/yamux"

	"github.com/jobbie/jobbie/internal/listen"
	"github.com/jobbie/jobbie/internal/pki"
)

// RegistryConfig configures a Registry. Zero values take the defaults in
// comments.
type RegistryConfig struct {
	// TLS is the hosted process's credentials, shown to agents (who
	// expect a gateway's by default). Required.
	TLS *pki.Credentials
	// ClientCAs, when set, are the CAs agents' certificates must come
	// from instead of TLS's: self-hosted shards' own CA, so that what it
	// signs is trusted here and nowhere else in the hosted process.
	ClientCAs *x509.CertPool
	// Authorize is consulted on every accept, after the certificate was
	// verified as a shard node's from the CA and its shard is not revoked
	// here: an error refuses the node in the TLS handshake. It is where
	// the caller checks that the shard is a registered self-hosted one of
	// a live tenant. It runs inside the handshake: answer from memory (a
	// cache kept current), not with a call. Nil admits every shard node
	// of the CA.
	Authorize pki.Policy
	// KeepAliveInterval is how often an idle session is pinged (default
	// 15s); KeepAliveTimeout bounds the answer and any write (default
	// 10s). A session that fails either closes.
	KeepAliveInterval time.Duration
	KeepAliveTimeout  time.Duration
	// HandshakeTimeout bounds an agent's TLS handshake (default
	// listen.DefaultHandshakeTimeout, 5s).
	HandshakeTimeout time.Duration
	Logger           *slog.Logger // default slog.Default()
}

func (c RegistryConfig) withDefaults() RegistryConfig {
	if c.KeepAliveInterval <= 0 {
		c.KeepAliveInterval = defaultKeepAliveInterval
	}
	if c.KeepAliveTimeout <= 0 {
		c.KeepAliveTimeout = defaultKeepAliveTimeout
	}
	if c.HandshakeTimeout <= 0 {
		c.HandshakeTimeout = listen.DefaultHandshakeTimeout
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c
}

// Registry is the hosted end of the tunnels: it accepts agents and opens
// streams to them. One Registry serves any number of listeners.
type Registry struct {
	cfg    RegistryConfig
	tls    *tls.Config
	ctx    context.Context // ends with Close: handshakes give up
	cancel context.CancelFunc
	wg     sync.WaitGroup // handshakes and sessions
	change notifier

	mu       sync.Mutex
	sessions map[pki.Identity]*session
	revoked  map[string]bool
	// revokedNodes are single nodes revoked (RevokeNode), by their
	// Hosted identity: their shard goes on.
	revokedNodes map[pki.Identity]bool
	listeners    map[net.Listener]struct{}
	closed       bool
}

// session is one agent's live tunnel.
type session struct {
	id    pki.Identity
	mux   *yamux.Session
	set   *streams
	since time.Time
}

// SessionInfo describes a live session, for health and operator views.
type SessionInfo struct {
	Node    pki.Identity // from the agent's certificate
	Remote  string       // the agent's address as seen here
	Since   time.Time
	Streams int // open streams: requests in flight and pooled connections
}

// NewRegistry returns a registry; Serve accepts agents on a listener.
func NewRegistry(cfg RegistryConfig) (*Registry, error) {
	if cfg.TLS == nil {
		return nil, errors.New("tunnel: the registry needs TLS credentials")
	}
	r := &Registry{cfg: cfg.withDefaults(), sessions: map[pki.Identity]*session{},
		revoked: map[string]bool{}, revokedNodes: map[pki.Identity]bool{}, listeners: map[net.Listener]struct{}{}}
	r.tls = r.cfg.TLS.Server(r.admit)
	if r.cfg.ClientCAs != nil {
		r.tls.ClientCAs = r.cfg.ClientCAs
	}
	r.ctx, r.cancel = context.WithCancel(context.Background())
	return r, nil
}

// admit is the accept policy: a shard node, of a shard not revoked, that
// the caller's authorizer accepts.
func (r *Registry) admit(id pki.Identity) error {
	if id.Role != pki.RoleShard {
		return fmt.Errorf("tunnel: %s is not a shard node", id)
	}
	r.mu.Lock()
	revoked := r.isRevoked(id)
	r.mu.Unlock()
	if revoked {
		return fmt.Errorf("tunnel: %s: %w", id, ErrRevoked)
	}
	if r.cfg.Authorize != nil {
		return r.cfg.Authorize(id)
	}
	return nil
}

// Serve accepts agents' TCP connections on ln until the registry closes
// (then it returns ErrClosed) or ln does. ln is closed on return. A
// listen.Listener is served as it is (its caller set its caps); any other
// is made one, named "tunnel": accept errors are retried, and at most
// listen.ProcessBudget().Pending connections (listen.DefaultMaxPendingPerAddr
// per address) may be in their handshake, each for HandshakeTimeout.
func (r *Registry) Serve(ln net.Listener) error {
	if _, ok := ln.(*listen.Listener); !ok {
		ln = listen.New(ln, listen.Config{Name: "tunnel", HandshakeTimeout: r.cfg.HandshakeTimeout,
			MaxPending: listen.ProcessBudget().Pending, MaxPendingPerAddr: listen.DefaultMaxPendingPerAddr, Logger: r.cfg.Logger})
	}
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		_ = ln.Close()
		return ErrClosed
	}
	r.listeners[ln] = struct{}{}
	// Counted while it runs, so the accepts it starts are never added
	// to a group Close is already waiting on.
	r.wg.Add(1)
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		delete(r.listeners, ln)
		r.mu.Unlock()
		_ = ln.Close()
		r.wg.Done()
	}()
	for {
		// Accept fails only once ln is closed: it waits out the rest.
		c, err := ln.Accept()
		if err != nil {
			if r.ctx.Err() != nil {
				return ErrClosed
			}
			return err
		}
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			r.accept(c)
		}()
	}
}

// accept authenticates one agent and, if admitted, makes its session
// the node's live one.
func (r *Registry) accept(raw net.Conn) {
	tc := tls.Server(raw, r.tls)
	ctx, cancel := context.WithTimeout(r.ctx, r.cfg.HandshakeTimeout)
	err := tc.HandshakeContext(ctx)
	cancel()
	if err != nil {
		r.cfg.Logger.Warn("tunnel: agent refused", "remote", raw.RemoteAddr().String(), "err", err)
		_ = tc.Close()
		return
	}
	// Its place among the unfinished handshakes is free, and its deadline
	// cleared: yamux keeps the session alive from here.
	listen.Established(raw)
	state := tc.ConnectionState()
	id, err := peerOf(&state)
	if err != nil { // admit saw it already; kept for safety
		_ = tc.Close()
		return
	}
	// The hosted side opens the streams: it is the yamux client.
	wc := newCoalescer(tc)
	mux, err := yamux.Client(wc, muxConfig(r.cfg.KeepAliveInterval, r.cfg.KeepAliveTimeout, r.cfg.Logger))
	if err != nil {
		_ = wc.Close()
		return
	}
	s := &session{id: id, mux: mux, set: newStreams(mux, &state), since: time.Now()}
	if !r.add(s) {
		s.set.close()
		return
	}
	// Agents only accept streams; one they open is closed unread. The
	// loop ends with the session.
	for {
		st, err := mux.AcceptStream()
		if err != nil {
			break
		}
		_ = st.Close()
	}
	s.set.end()
	r.remove(s)
	r.cfg.Logger.Info("tunnel: agent disconnected", "node", id.String(), "remote", raw.RemoteAddr().String())
}

// add makes s its node's live session, closing the one it replaces (the
// node reconnected before the old link was found dead). A shard revoked
// while s was being accepted is refused.
func (r *Registry) add(s *session) bool {
	r.mu.Lock()
	if r.closed || r.isRevoked(s.id) {
		r.mu.Unlock()
		return false
	}
	// Keyed without the owner: callers dial a shard and node, and one
	// node has one live session whoever its certificate names as owner.
	old := r.sessions[s.id.Hosted()]
	r.sessions[s.id.Hosted()] = s
	r.mu.Unlock()
	if old != nil {
		r.cfg.Logger.Info("tunnel: agent reconnected, replacing its old session", "node", s.id.String())
		old.set.close()
	}
	r.cfg.Logger.Info("tunnel: agent connected", "node", s.id.String(), "remote", s.mux.RemoteAddr().String())
	r.change.notify()
	return true
}

// remove forgets s if it is still its node's live session.
func (r *Registry) remove(s *session) {
	r.mu.Lock()
	if r.sessions[s.id.Hosted()] == s {
		delete(r.sessions, s.id.Hosted())
	}
	r.mu.Unlock()
	s.set.close()
	r.change.notify()
}

// Revoke closes every session of shard and refuses its nodes from now
// on, for the life of this registry.
func (r *Registry) Revoke(shardID string) {
	r.mu.Lock()
	r.revoked[shardID] = true
	var gone []*session
	for id, s := range r.sessions {
		if id.Shard == shardID {
			gone = append(gone, s)
			delete(r.sessions, id)
		}
	}
	r.mu.Unlock()
	for _, s := range gone {
		r.cfg.Logger.Info("tunnel: shard revoked, session closed", "node", s.id.String())
		s.set.close()
	}
	r.change.notify()
}

// RevokeNode closes the session of one node of shard and refuses that
// node from now on, for the life of this registry, while the shard's
// other nodes go on (a node removed from its shard, its id retired).
func (r *Registry) RevokeNode(shardID, nodeID string) {
	id := pki.Identity{Role: pki.RoleShard, Shard: shardID, Node: nodeID}
	r.mu.Lock()
	r.revokedNodes[id] = true
	s := r.sessions[id]
	delete(r.sessions, id)
	r.mu.Unlock()
	if s != nil {
		r.cfg.Logger.Info("tunnel: node revoked, session closed", "node", s.id.String())
		s.set.close()
	}
	r.change.notify()
}

// isRevoked reports whether id's shard or id itself is revoked; r.mu is
// held.
func (r *Registry) isRevoked(id pki.Identity) bool {
	return r.revoked[id.Shard] || r.revokedNodes[id.Hosted()]
}

// DialContext opens a stream to a node: a connection on which to send
// it HTTP requests. A node without a live session fails at once
// (ErrNotConnected, ErrRevoked, ErrClosed, in a *net.OpError).
func (r *Registry) DialContext(ctx context.Context, shardID, nodeID string) (net.Conn, error) {
	id := pki.Identity{Role: pki.RoleShard, Shard: shardID, Node: nodeID}
	r.mu.Lock()
	s, revoked, closed := r.sessions[id], r.isRevoked(id), r.closed
	r.mu.Unlock()
	switch {
	case closed:
		return nil, dialError(shardID, nodeID, ErrClosed)
	case revoked:
		return nil, dialError(shardID, nodeID, ErrRevoked)
	case s == nil:
		return nil, dialError(shardID, nodeID, ErrNotConnected)
	}
	st, err := s.open(ctx)
	if err != nil {
		if ctx.Err() == nil {
			err = fmt.Errorf("%w (%w)", ErrNotConnected, err)
		}
		return nil, dialError(shardID, nodeID, err)
	}
	return s.set.wrap(st), nil
}

// open opens a stream, giving up when ctx ends. Opening waits only while
// 1024 earlier opens are unacknowledged (a dead link, which the session's
// keep-alive ends).
func (s *session) open(ctx context.Context) (*yamux.Stream, error) {
	if ctx.Done() == nil {
		return s.mux.OpenStream()
	}
	type opened struct {
		st  *yamux.Stream
		err error
	}
	ch := make(chan opened, 1)
	go func() {
		st, err := s.mux.OpenStream()
		ch <- opened{st, err}
	}()
	select {
	case o := <-ch:
		return o.st, o.err
	case <-ctx.Done():
		go func() {
			if o := <-ch; o.st != nil {
				_ = o.st.Close()
			}
		}()
		return nil, ctx.Err()
	}
}

// Dial opens a stream to the node of a tunnel address
// ("tunnel://<shard>/<node>"): a fasthttp.HostClient's Dial, with Addr
// set to that address and IsTLS false (the tunnel is the TLS).
func (r *Registry) Dial(addr string) (net.Conn, error) {
	shardID, nodeID, ok := ParseAddr(addr)
	if !ok {
		return nil, &net.OpError{Op: "dial", Net: "tunnel",
			Err: fmt.Errorf("tunnel: %q is not a tunnel://<shard>/<node> address", addr)}
	}
	return r.DialContext(context.Background(), shardID, nodeID)
}

// NodeDialer is a net/http Transport.DialContext that reaches one node,
// whatever the request's host: give each node its own Transport.
func (r *Registry) NodeDialer(shardID, nodeID string) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, _, _ string) (net.Conn, error) { return r.DialContext(ctx, shardID, nodeID) }
}

// Connected reports whether a node has a live session.
func (r *Registry) Connected(shardID, nodeID string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.sessions[pki.Identity{Role: pki.RoleShard, Shard: shardID, Node: nodeID}]
	return ok
}

// Sessions lists the live sessions by shard and node.
func (r *Registry) Sessions() []SessionInfo {
	r.mu.Lock()
	out := make([]SessionInfo, 0, len(r.sessions))
	for _, s := range r.sessions {
		out = append(out, SessionInfo{Node: s.id, Remote: s.mux.RemoteAddr().String(), Since: s.since, Streams: s.mux.NumStreams()})
	}
	r.mu.Unlock()
	slices.SortFunc(out, func(a, b SessionInfo) int {
		return strings.Compare(a.Node.Shard+"/"+a.Node.Node, b.Node.Shard+"/"+b.Node.Node)
	})
	return out
}

// Changed is closed at the next change of the sessions (one connected,
// replaced, closed or revoked): take it, then read, then wait on it.
func (r *Registry) Changed() <-chan struct{} { return r.change.wait() }

// Close stops every Serve, closes every session and waits for them.
func (r *Registry) Close() error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil
	}
	r.closed = true
	lns := make([]net.Listener, 0, len(r.listeners))
	for ln := range r.listeners {
		lns = append(lns, ln)
	}
	sessions := make([]*session, 0, len(r.sessions))
	for _, s := range r.sessions {
		sessions = append(sessions, s)
	}
	r.mu.Unlock()
	r.cancel()
	for _, ln := range lns {
		_ = ln.Close()
	}
	for _, s := range sessions {
		s.set.close()
	}
	r.wg.Wait()
	r.change.notify()
	return nil
}

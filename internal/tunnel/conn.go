package tunnel

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hashicorp/yamux"

	"github.com/jobbie/jobbie/internal/pki"
)

// Errors of a dial to a node (wrapped in a *net.OpError, Op "dial").
var (
	// ErrNotConnected: the node has no live tunnel session here.
	ErrNotConnected = errors.New("tunnel: the shard node is not connected")
	// ErrRevoked: the node's shard was revoked (Registry.Revoke), or the
	// node itself (Registry.RevokeNode).
	ErrRevoked = errors.New("tunnel: the shard or node is revoked")
	// ErrClosed: the registry was closed.
	ErrClosed = errors.New("tunnel: the registry is closed")
)

// scheme prefixes a node's tunnel address: tunnel://<shard>/<node>.
const scheme = "tunnel://"

// Addr is a node's tunnel address, "tunnel://<shard>/<node>".
func Addr(shardID, nodeID string) string { return scheme + shardID + "/" + nodeID }

// ParseAddr reads a tunnel address made by Addr; ok is false for any
// other string (a host:port, an URL of another scheme).
func ParseAddr(addr string) (shardID, nodeID string, ok bool) {
	rest, found := strings.CutPrefix(addr, scheme)
	if !found {
		return "", "", false
	}
	shardID, nodeID, found = strings.Cut(rest, "/")
	id := pki.Identity{Role: pki.RoleShard, Shard: shardID, Node: nodeID}
	if !found || id.Validate() != nil {
		return "", "", false
	}
	return shardID, nodeID, true
}

// nodeAddr is a node's tunnel address as a net.Addr.
type nodeAddr struct{ shard, node string }

func (a nodeAddr) Network() string { return "tunnel" }
func (a nodeAddr) String() string  { return Addr(a.shard, a.node) }

// dialError is how every failed dial is reported: a net.OpError whose
// Op "dial" says no request went anywhere.
func dialError(shard, node string, err error) error {
	return &net.OpError{Op: "dial", Net: "tunnel", Addr: nodeAddr{shard, node}, Err: err}
}

// conn is one stream of a tunnel. It answers for the tunnel's TLS
// connection, which authenticated the peer: Handshake (done already) and
// ConnectionState make servers and clients that look for a TLS conn
// (fasthttp's connTLSer, pki.PeerIdentity) see the peer's certificate.
type conn struct {
	*yamux.Stream
	set    *streams
	closed atomic.Bool
}

func (c *conn) Handshake() error                     { return nil }
func (c *conn) ConnectionState() tls.ConnectionState { return *c.set.state }

// A stream whose session ended reads EOF, as from a peer that closed,
// and fails to write as on a broken TCP connection, rather than with the
// deadline error that wakes it (see streams): servers and clients treat
// both as the peer going away, and servers do not log them.
var errEnded = fmt.Errorf("tunnel: the session ended: %w", syscall.EPIPE)

func (c *conn) Read(b []byte) (int, error) {
	n, err := c.Stream.Read(b)
	if err = c.mapErr(err); err == errEnded {
		err = io.EOF
	}
	return n, err
}

func (c *conn) Write(b []byte) (int, error) {
	n, err := c.Stream.Write(b)
	return n, c.mapErr(err)
}

// mapErr names why a Read or Write woken by an expired deadline failed.
func (c *conn) mapErr(err error) error {
	switch {
	case err == nil || errors.Is(err, io.EOF):
		return err
	case c.closed.Load():
		return net.ErrClosed
	case c.set.mux.IsClosed():
		return errEnded
	}
	return err
}

// Close closes the stream fully, as net.Conn says: yamux's Close only
// half-closes it (a blocked Read would wait for the peer's close), so
// an expired deadline wakes this side's Read and Write too.
func (c *conn) Close() error {
	if c.closed.Swap(true) {
		return nil
	}
	c.set.forget(c)
	err := c.Stream.Close()
	_ = c.Stream.SetDeadline(expired)
	return err
}

// streams are a session's open streams. yamux v0.1.2 spins a stream's
// blocked Read or Write on a closed session until its receive loop
// winds down (hashicorp/yamux PR 176), which with many waiting streams
// starves that loop for seconds; a deadline in the past makes them
// return instead, so end wakes them all the moment the session ends.
type streams struct {
	mux   *yamux.Session
	state *tls.ConnectionState
	mu    sync.Mutex
	open  map[*conn]struct{}
	ended bool
}

func newStreams(mux *yamux.Session, state *tls.ConnectionState) *streams {
	return &streams{mux: mux, state: state, open: map[*conn]struct{}{}}
}

// expired is the deadline that wakes a stream of an ended session.
var expired = time.Unix(1, 0)

func (s *streams) wrap(st *yamux.Stream) *conn {
	c := &conn{Stream: st, set: s}
	s.mu.Lock()
	ended := s.ended
	if !ended {
		s.open[c] = struct{}{}
	}
	s.mu.Unlock()
	if ended {
		_ = st.SetDeadline(expired)
	}
	return c
}

func (s *streams) forget(c *conn) {
	s.mu.Lock()
	delete(s.open, c)
	s.mu.Unlock()
}

// end wakes every open stream; it is called as soon as the session
// ends, and before this side closes it.
func (s *streams) end() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ended = true
	for c := range s.open {
		_ = c.Stream.SetDeadline(expired)
	}
	clear(s.open)
}

// close ends the session from this side.
func (s *streams) close() {
	s.end()
	_ = s.mux.Close()
}

// ConnState is the TLS state of the tunnel that carries c, for a server
// that does not look for it itself (net/http looks for *tls.Conn only).
func ConnState(c net.Conn) (*tls.ConnectionState, bool) {
	tc, ok := c.(*conn)
	if !ok {
		return nil, false
	}
	st := *tc.set.state
	return &st, true
}

// peerOf reads the verified identity of a tunnel's TLS peer.
func peerOf(st *tls.ConnectionState) (pki.Identity, error) {
	id, ok := pki.PeerIdentity(st)
	if !ok {
		return pki.Identity{}, fmt.Errorf("tunnel: the peer's certificate names no identity")
	}
	return id, nil
}

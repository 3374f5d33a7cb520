package shardclient

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/jobbie/jobbie/internal/shardlink"
)

// A node reached by TCP or a Unix socket also gets a link
// (internal/shardlink): one long-lived connection carrying many requests
// at once, so that under concurrency requests and answers share each
// system call. It is dialed once a request got an answer on the pool (the
// node is there and is who it must be: a refused handshake costs no
// second one). Node.DoAnswer sends on it when it is up, and on the pool
// otherwise: while it is being dialed, when it is at its bound of
// requests in flight, for a request over the node's bounds or whose
// answer is charged to a Budget (the link's reader cannot wait for a
// budget without holding up every other answer), and for a node that
// refused it (an older node answers the upgrade with 404) until
// linkRefusedWait passed. A tunnel address has no link: its streams are
// multiplexed already. Streamed requests (Send, OpenStream) never use it.
//
// What the caller sees is the pool's: a request the link did not write
// goes on the pool instead (it was certainly not sent); one written and
// lost with its link is a failure with Sent true; a deadline passed is
// fasthttp.ErrTimeout (the node is told to give up on it).

const (
	// linkDialTimeout bounds dialing a link and its upgrade.
	linkDialTimeout = 5 * time.Second
	// linkFailedWait is how long after a failed dial the node's requests
	// stay on the pool before the link is dialed again.
	linkFailedWait = time.Second
	// linkRefusedWait is the same after the node refused the upgrade (an
	// older node: 404), or a caller it does not admit on links.
	linkRefusedWait = 30 * time.Second
	// linkIdle closes a link with nothing in flight, as the pool's idle
	// connections are (MaxIdleConnDuration).
	linkIdle = 30 * time.Second
)

// nodeLink is a node's link, dialed lazily.
type nodeLink struct {
	conn    atomic.Pointer[shardlink.Conn]
	proven  atomic.Bool  // a request got an answer on the pool
	waiting atomic.Int64 // unix nanoseconds before which it is not dialed (retryAt, read without mu)

	mu      sync.Mutex
	dialing bool
	retryAt time.Time // no dial before
	closed  bool
}

// links is what the client's links share: Close ends their dials and
// waits for them.
type links struct {
	ctx  context.Context
	wg   sync.WaitGroup
	off  bool // Config.NoLink
	opts shardlink.Options
}

// linkConn returns n's link if it is up, or starts dialing it and
// returns nil.
func (n *Node) linkConn() *shardlink.Conn {
	if c := n.link.conn.Load(); c != nil && c.Alive() {
		return c
	}
	if !n.link.proven.Load() || time.Now().UnixNano() < n.link.waiting.Load() {
		return nil
	}
	l := &n.link
	l.mu.Lock()
	defer l.mu.Unlock()
	if c := l.conn.Load(); c != nil {
		if c.Alive() {
			return c
		}
		l.conn.Store(nil)
		c.Close()
	}
	if l.dialing || l.closed || time.Now().Before(l.retryAt) || n.links.ctx.Err() != nil {
		return nil
	}
	l.dialing = true
	n.links.wg.Add(1)
	go n.dialLink()
	return nil
}

// dialLink dials n's link with the pool's dialer and upgrades it.
func (n *Node) dialLink() {
	defer n.links.wg.Done()
	c, err := n.openLink()
	l := &n.link
	l.mu.Lock()
	defer l.mu.Unlock()
	l.dialing = false
	var refused *shardlink.UpgradeError
	switch {
	case err == nil && (l.closed || n.links.ctx.Err() != nil):
		c.Close()
	case err == nil:
		l.conn.Store(c)
	case errors.As(err, &refused):
		l.retryAt = time.Now().Add(linkRefusedWait)
	default:
		l.retryAt = time.Now().Add(linkFailedWait)
	}
	l.waiting.Store(l.retryAt.UnixNano())
}

func (n *Node) openLink() (*shardlink.Conn, error) {
	ctx, cancel := context.WithTimeout(n.links.ctx, linkDialTimeout)
	defer cancel()
	deadline, _ := ctx.Deadline()
	var (
		conn net.Conn
		err  error
		d    net.Dialer
	)
	if n.unix {
		conn, err = d.DialContext(ctx, "unix", n.hc.Addr)
	} else {
		conn, err = d.DialContext(ctx, "tcp", n.hc.Addr)
	}
	if err != nil {
		return nil, err
	}
	if n.hc.IsTLS {
		cfg := n.hc.TLSConfig
		if cfg == nil {
			cfg = &tls.Config{}
		}
		tc := tls.Client(conn, cfg)
		if err := tc.HandshakeContext(ctx); err != nil {
			_ = conn.Close()
			return nil, err
		}
		conn = tc
	}
	stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Now()) })
	defer stop()
	return shardlink.Open(conn, n.host, deadline, n.links.opts)
}

// closeLink ends n's link, for good.
func (n *Node) closeLink() {
	l := &n.link
	l.mu.Lock()
	l.closed = true
	c := l.conn.Swap(nil)
	l.mu.Unlock()
	if c != nil {
		c.Close()
	}
}

// Linked reports whether n's link is up (for tests and metrics).
func (n *Node) Linked() bool {
	c := n.link.conn.Load()
	return c != nil && c.Alive()
}

// doLink sends req on n's link, if it is up and takes it; taken is false
// when the request should go on the pool instead.
func (n *Node) doLink(req *fasthttp.Request, resp *fasthttp.Response, deadline time.Time, max int) (taken bool, err error) {
	c := n.linkConn()
	if c == nil {
		return false, nil
	}
	err = c.Do(req, resp, deadline, max)
	var tl *shardlink.TooLargeError
	switch {
	case errors.Is(err, shardlink.ErrNotTaken):
		return false, nil
	case errors.As(err, &tl):
		return true, &AnswerTooLargeError{Limit: tl.Limit, Stated: tl.Stated}
	}
	return true, err
}

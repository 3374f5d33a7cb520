package limits

import (
	"errors"
	"io"
	"net"
	"net/netip"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/listen"
)

// overLimitGrace is how long a connection over its address's limit may
// take to send the request its 429 answers: it holds a descriptor until
// closed, so it gets a short read deadline rather than ReadTimeout.
const overLimitGrace = time.Second

// Listener is the gateway's public listener as fasthttp sees it: a
// listen.Listener (accept errors retried and reported to /readyz, the
// total connection cap) that also counts open connections per client
// address (listen.ClientKey: an IPv6 one per /64) and marks those over
// the limit, which LimitConns answers with 429.
type Listener struct {
	*listen.Listener
	perAddr int // <= 0: no limit

	mu   sync.Mutex
	open map[netip.Prefix]int
}

// NewListener serves ln as cfg says (its name, total cap and readiness
// group), allowing perAddr connections per client address (<= 0: no
// limit).
func NewListener(ln net.Listener, perAddr int, cfg listen.Config) *Listener {
	return &Listener{Listener: listen.New(ln, cfg), perAddr: perAddr, open: map[netip.Prefix]int{}}
}

// Accept returns the next connection, counted against its address.
func (l *Listener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return l.track(c), nil
}

// track counts c against its address and wraps it so that closing it
// gives its place back.
func (l *Listener) track(c net.Conn) net.Conn {
	tc := &conn{Conn: c, l: l, addr: listen.ClientKey(c.RemoteAddr())}
	openConns.Inc()
	if !tc.addr.IsValid() {
		return tc
	}
	l.mu.Lock()
	n := l.open[tc.addr] + 1
	l.open[tc.addr] = n
	l.mu.Unlock()
	if l.perAddr > 0 && n > l.perAddr {
		tc.overLimit = true
		tc.cutoff = time.Now().Add(overLimitGrace)
		_ = c.SetReadDeadline(tc.cutoff)
	}
	return tc
}

func (l *Listener) release(addr netip.Prefix) {
	openConns.Dec()
	if !addr.IsValid() {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	decrement(l.open, addr)
}

// OpenFrom is how many connections addr (its /64, for IPv6) has open.
func (l *Listener) OpenFrom(addr netip.Addr) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.open[listen.AddrKey(addr)]
}

// Lingering close (see conn.Close): at most this long, this much.
const (
	lingerTimeout  = 500 * time.Millisecond
	lingerMaxBytes = 1 << 20
)

// conn is an accepted connection, counted until closed.
type conn struct {
	net.Conn  // NetConn returns it, so conncheck finds the socket
	l         *Listener
	addr      netip.Prefix
	overLimit bool
	cutoff    time.Time // over the limit: no read may wait past it
	linger    bool      // answered before the request was read whole
	closeOnce sync.Once
}

// Close closes the connection. One answered before its request was read
// whole (headers too large) may still have input coming, and closing a
// socket with unread input makes the kernel reset the connection, which
// can destroy the answer before the client reads it. So such a
// connection first sends FIN and drains the rest for a moment, as
// net/http does.
func (c *conn) Close() error {
	if tc, ok := tcpOf(c.Conn); ok && c.linger {
		_ = tc.CloseWrite()
		_ = tc.SetReadDeadline(time.Now().Add(lingerTimeout))
		_, _ = io.Copy(io.Discard, io.LimitReader(tc, lingerMaxBytes))
	}
	err := c.Conn.Close()
	c.closeOnce.Do(func() { c.l.release(c.addr) })
	return err
}

// SetReadDeadline keeps a connection over the limit from waiting longer
// than its grace, whatever fasthttp asks for (ReadTimeout, IdleTimeout).
func (c *conn) SetReadDeadline(t time.Time) error {
	return c.Conn.SetReadDeadline(c.capped(t))
}

func (c *conn) SetDeadline(t time.Time) error {
	if err := c.Conn.SetWriteDeadline(t); err != nil {
		return err
	}
	return c.SetReadDeadline(t)
}

func (c *conn) capped(t time.Time) time.Time {
	if c.overLimit && (t.IsZero() || t.After(c.cutoff)) {
		return c.cutoff
	}
	return t
}

// LimitConns answers a request on a connection over its address's limit
// with 429, and closes the connection.
func LimitConns(c *fiber.Ctx) error {
	if tc, ok := connOf(c); ok && tc.overLimit {
		return connLimited(c, tc)
	}
	return c.Next()
}

// HandleError is the gateway's fiber ErrorHandler: apierr's (which closes
// a connection that timed out before its client sent a byte without a
// word, see apierr.QuietListener), except that a connection over its
// limit that failed before routing (it sent nothing within its grace,
// say) still hears why it is closed.
func HandleError(c *fiber.Ctx, err error) error {
	tc, ok := connOf(c)
	if ok && errors.Is(err, fiber.ErrRequestHeaderFieldsTooLarge) {
		tc.linger = true
	}
	if ok && tc.overLimit && apierr.CodeOf(err) != apierr.ConnectionLimit {
		err = connLimited(c, tc)
	}
	return apierr.Handler(c, err)
}

// connOf is the listener's connection under c's (apierr.QuietListener
// wraps it).
func connOf(c *fiber.Ctx) (*conn, bool) {
	nc := c.Context().Conn()
	for range 4 {
		if tc, ok := nc.(*conn); ok {
			return tc, true
		}
		u, ok := nc.(interface{ NetConn() net.Conn })
		if !ok {
			break
		}
		nc = u.NetConn()
	}
	return nil, false
}

func connLimited(c *fiber.Ctx, tc *conn) error {
	c.Context().SetConnectionClose()
	refusedTotal.WithLabelValues(limitConnsPerAddr).Inc()
	return apierr.Retry(apierr.ConnectionLimit, 1,
		"too many open connections from %s: the limit is %d per address; close idle connections or retry later", clientName(tc.addr), tc.l.perAddr)
}

// NetConn is the connection under the count.
func (c *conn) NetConn() net.Conn { return c.Conn }

// clientName is how a client's address is named to it: the address
// alone for IPv4, the /64 for IPv6 (counted together).
func clientName(p netip.Prefix) string {
	if p.Addr().Is4() {
		return p.Addr().String()
	}
	return p.String()
}

// tcpOf is the TCP connection under nc's wrappers (internal/listen's
// count, at least), if there is one.
func tcpOf(nc net.Conn) (*net.TCPConn, bool) {
	for range 4 {
		if tc, ok := nc.(*net.TCPConn); ok {
			return tc, true
		}
		u, ok := nc.(interface{ NetConn() net.Conn })
		if !ok {
			return nil, false
		}
		nc = u.NetConn()
	}
	return nil, false
}

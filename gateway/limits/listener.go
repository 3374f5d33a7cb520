package limits

import (
	"errors"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/jobbie/jobbie/internal/apierr"
)

// Backoff between failed accepts: as net/http's, from 5 ms doubling to 1 s,
// so the gateway serves again within a second of descriptors coming free.
const (
	minAcceptDelay = 5 * time.Millisecond
	maxAcceptDelay = time.Second
)

// overLimitGrace is how long a connection over its address's limit may
// take to send the request its 429 answers: it holds a descriptor until
// closed, so it gets a short read deadline rather than ReadTimeout.
const overLimitGrace = time.Second

// Listener is the gateway's listener as fasthttp sees it. fasthttp's
// Serve returns on any accept error other than a timeout, and the gateway
// would then never accept again; the usual one is EMFILE when descriptors
// run out. So Accept retries every error but a closed listener, with
// backoff, and reports the failure to /readyz until an accept succeeds.
// It also counts open connections per client address and marks those
// over the limit, which LimitConns answers with 429.
type Listener struct {
	net.Listener
	perAddr int // <= 0: no limit
	log     *slog.Logger

	closed    chan struct{}
	closeOnce sync.Once
	failure   atomic.Pointer[AcceptFailure] // nil while accepting

	mu   sync.Mutex
	open map[netip.Addr]int
}

// AcceptFailure is an accept error that has not yet been followed by a
// successful accept.
type AcceptFailure struct {
	Err   error
	Since time.Time
}

// NewListener serves ln, allowing perAddr connections per client address
// (<= 0: no limit).
func NewListener(ln net.Listener, perAddr int, log *slog.Logger) *Listener {
	return &Listener{Listener: ln, perAddr: perAddr, log: log, closed: make(chan struct{}), open: map[netip.Addr]int{}}
}

// Accept returns the next connection, waiting out accept errors.
func (l *Listener) Accept() (net.Conn, error) {
	var delay time.Duration
	for {
		c, err := l.Listener.Accept()
		if err == nil {
			l.recovered()
			return l.track(c), nil
		}
		if errors.Is(err, net.ErrClosed) {
			return nil, err
		}
		l.failed(err)
		delay = min(max(2*delay, minAcceptDelay), maxAcceptDelay)
		t := time.NewTimer(delay)
		select {
		case <-t.C:
		case <-l.closed:
			t.Stop()
			return nil, net.ErrClosed
		}
	}
}

// Close stops listening and ends a retry in progress.
func (l *Listener) Close() error {
	l.closeOnce.Do(func() { close(l.closed) })
	return l.Listener.Close()
}

// Failing is the accept error the gateway is waiting out, if any (none
// before it listens).
func (l *Listener) Failing() *AcceptFailure {
	if l == nil {
		return nil
	}
	return l.failure.Load()
}

func (l *Listener) failed(err error) {
	acceptErrors.Inc()
	if l.failure.Load() == nil {
		l.failure.Store(&AcceptFailure{Err: err, Since: time.Now()})
		l.log.Error("gateway: cannot accept connections; retrying with backoff", "err", err)
	}
}

func (l *Listener) recovered() {
	if f := l.failure.Swap(nil); f != nil {
		l.log.Info("gateway: accepting connections again", "after", time.Since(f.Since).Round(time.Millisecond))
	}
}

// track counts c against its address and wraps it so that closing it
// gives its place back.
func (l *Listener) track(c net.Conn) net.Conn {
	tc := &conn{Conn: c, l: l}
	if a, ok := c.RemoteAddr().(*net.TCPAddr); ok {
		tc.addr = a.AddrPort().Addr().Unmap()
	}
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

func (l *Listener) release(addr netip.Addr) {
	openConns.Dec()
	if !addr.IsValid() {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	decrement(l.open, addr)
}

// OpenFrom is how many connections addr has open.
func (l *Listener) OpenFrom(addr netip.Addr) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.open[addr]
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
	addr      netip.Addr
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
	if tc, ok := c.Conn.(*net.TCPConn); ok && c.linger {
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
		"too many open connections from %s: the limit is %d per address; close idle connections or retry later", tc.addr, tc.l.perAddr)
}

// NetConn is the connection under the count.
func (c *conn) NetConn() net.Conn { return c.Conn }

package listen

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"
)

// Backoff between failed accepts: as net/http's, from 5 ms doubling to
// 1 s, so a listener serves again within a second of descriptors coming
// free.
const (
	minAcceptDelay = 5 * time.Millisecond
	maxAcceptDelay = time.Second
)

// failureStale ends a failure no failed accept has renewed for that long.
// An error such as EMFILE recurs at every retry while a connection waits
// (at most maxAcceptDelay apart), so a listener whose accept has not
// failed for longer waits in Accept with nothing queued and would accept:
// /readyz stops reporting it though no connection came to clear it (a
// tunnel port nobody dials would otherwise keep a role unready for good).
const failureStale = 3 * maxAcceptDelay

// Config is one listener's name and bounds. Zero values are no bound.
type Config struct {
	// Name says which listener it is in logs, metrics and /readyz
	// ("public", "internal", "tunnel", "raft", "metrics", "socket").
	Name string
	// MaxConns caps the connections open at once; the next are closed
	// as soon as they are accepted (<= 0: no cap).
	MaxConns int
	// MaxPending caps the connections that have not finished their
	// handshake (Established), in total and per client address (an IPv6
	// one per /64); over either the connection is closed at once (<= 0:
	// no cap).
	MaxPending        int
	MaxPendingPerAddr int
	// HandshakeTimeout is the deadline by which an accepted connection
	// must be Established; it is cleared then (<= 0: none).
	HandshakeTimeout time.Duration
	// Group is told while the listener is failing (nil: no one).
	Group  *Group
	Logger *slog.Logger // default slog.Default()
}

// Listener accepts as its net.Listener does, retrying errors and holding
// to its Config's bounds. Close ends it.
type Listener struct {
	net.Listener
	cfg       Config
	closed    chan struct{}
	closeOnce sync.Once
	failure   atomic.Pointer[Failure] // nil while accepting
	lastErr   atomic.Int64            // unix nanos of the last failed accept
	stale     time.Duration           // failureStale (tests shorten it)
	refusedAt atomic.Int64            // unix nanos of the last refusal logged

	mu      sync.Mutex
	open    int
	pending int
	byAddr  map[netip.Prefix]int // pending, per client address
}

// Failure is an accept error that has not yet been followed by a
// successful accept.
type Failure struct {
	Listener string
	Addr     string
	Err      error
	Since    time.Time
}

func (f *Failure) Error() string {
	return fmt.Sprintf("the %s listener (%s) cannot accept connections since %s ago: %v",
		f.Listener, f.Addr, time.Since(f.Since).Truncate(time.Millisecond), f.Err)
}

func (f *Failure) Unwrap() error { return f.Err }

// New serves ln as cfg says, and joins cfg.Group.
func New(ln net.Listener, cfg Config) *Listener {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Name == "" {
		cfg.Name = "listener"
	}
	l := &Listener{Listener: ln, cfg: cfg, closed: make(chan struct{}), byAddr: map[netip.Prefix]int{}, stale: failureStale}
	cfg.Group.add(l)
	return l
}

// Accept returns the next connection within the bounds, waiting out
// accept errors. It fails only once the listener is closed.
func (l *Listener) Accept() (net.Conn, error) {
	var delay time.Duration
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) || l.isClosed() {
				return nil, net.ErrClosed
			}
			l.failed(err)
			delay = min(max(2*delay, minAcceptDelay), maxAcceptDelay)
			if !l.wait(delay) {
				return nil, net.ErrClosed
			}
			continue
		}
		delay = 0
		l.recovered()
		if tc, ok := l.admit(c); ok {
			return tc, nil
		}
	}
}

func (l *Listener) wait(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-l.closed:
		return false
	}
}

func (l *Listener) isClosed() bool {
	select {
	case <-l.closed:
		return true
	default:
		return false
	}
}

// Close stops listening, ends a retry in progress and leaves the group.
func (l *Listener) Close() error {
	l.closeOnce.Do(func() {
		close(l.closed)
		l.failure.Store(nil)
		l.cfg.Group.remove(l)
	})
	return l.Listener.Close()
}

// Name is the listener's Config.Name.
func (l *Listener) Name() string { return l.cfg.Name }

// Failing is the accept error the listener is waiting out, if any: one
// that a successful accept has not cleared and a failed one renewed
// within failureStale.
func (l *Listener) Failing() *Failure {
	if l == nil {
		return nil
	}
	f := l.failure.Load()
	if f == nil || l.staleAt(time.Now()) {
		return nil
	}
	return f
}

// staleAt reports whether no failed accept came within l.stale of now.
func (l *Listener) staleAt(now time.Time) bool {
	return now.Sub(time.Unix(0, l.lastErr.Load())) > l.stale
}

// Open is how many connections it has open.
func (l *Listener) Open() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.open
}

func (l *Listener) failed(err error) {
	acceptErrors.WithLabelValues(l.cfg.Name).Inc()
	now := time.Now()
	if l.failure.Load() == nil || l.staleAt(now) {
		l.failure.Store(&Failure{Listener: l.cfg.Name, Addr: l.Addr().String(), Err: err, Since: now})
		l.cfg.Logger.Error("listen: cannot accept connections; retrying with backoff", "listener", l.cfg.Name, "addr", l.Addr().String(), "err", err)
	}
	l.lastErr.Store(now.UnixNano())
}

func (l *Listener) recovered() {
	if f := l.failure.Swap(nil); f != nil {
		l.cfg.Logger.Info("listen: accepting connections again", "listener", l.cfg.Name, "after", time.Since(f.Since).Round(time.Millisecond))
	}
}

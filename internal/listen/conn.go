package listen

import (
	"net"
	"net/netip"
	"sync"
	"time"
)

// Refusal reasons, the reason label of jobbie_listener_refused_total.
const (
	refusedConns          = "connections"
	refusedPending        = "handshakes"
	refusedPendingPerAddr = "handshakes_per_address"
)

// refusalLogEvery spaces the log lines of refused connections: a flood
// is one line a second, not one per connection.
const refusalLogEvery = time.Second

// admit counts c against the caps, or closes it if it is over one.
func (l *Listener) admit(c net.Conn) (net.Conn, bool) {
	key := ClientKey(c.RemoteAddr())
	handshake := l.cfg.MaxPending > 0 || l.cfg.MaxPendingPerAddr > 0 || l.cfg.HandshakeTimeout > 0
	l.mu.Lock()
	reason := ""
	switch {
	case l.cfg.MaxConns > 0 && l.open >= l.cfg.MaxConns:
		reason = refusedConns
	case l.cfg.MaxPending > 0 && l.pending >= l.cfg.MaxPending:
		reason = refusedPending
	case l.cfg.MaxPendingPerAddr > 0 && key.IsValid() && l.byAddr[key] >= l.cfg.MaxPendingPerAddr:
		reason = refusedPendingPerAddr
	}
	if reason != "" {
		l.mu.Unlock()
		_ = c.Close()
		l.refused(reason, key)
		return nil, false
	}
	l.open++
	if handshake {
		l.pending++
		if key.IsValid() {
			l.byAddr[key]++
		}
	}
	l.mu.Unlock()
	openConns.WithLabelValues(l.cfg.Name).Inc()
	tc := &Conn{Conn: c, l: l, key: key, pending: handshake}
	if l.cfg.HandshakeTimeout > 0 {
		_ = c.SetDeadline(time.Now().Add(l.cfg.HandshakeTimeout))
	}
	return tc, true
}

func (l *Listener) refused(reason string, key netip.Prefix) {
	refusedTotal.WithLabelValues(l.cfg.Name, reason).Inc()
	now := time.Now().UnixNano()
	last := l.refusedAt.Load()
	if now-last >= int64(refusalLogEvery) && l.refusedAt.CompareAndSwap(last, now) {
		l.cfg.Logger.Warn("listen: connection over a cap closed at once", "listener", l.cfg.Name, "cap", reason,
			"max_conns", l.cfg.MaxConns, "max_handshakes", l.cfg.MaxPending, "max_handshakes_per_addr", l.cfg.MaxPendingPerAddr, "client", key.String())
	}
}

// Conn is an accepted connection, counted until it is closed.
type Conn struct {
	net.Conn // NetConn returns it, so wrappers can be seen through
	l        *Listener
	key      netip.Prefix

	mu          sync.Mutex
	pending     bool // counted as not yet Established
	closed      bool
	established bool
}

// Established says the connection finished its handshake: it no longer
// counts against the handshake caps, and its deadline is cleared.
func (c *Conn) Established() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.established || c.closed {
		return
	}
	c.established = true
	if c.l.cfg.HandshakeTimeout > 0 {
		_ = c.Conn.SetDeadline(time.Time{})
	}
	if c.pending {
		c.pending = false
		c.l.settled(c.key)
	}
}

// Close closes the connection and gives its place back.
func (c *Conn) Close() error {
	err := c.Conn.Close()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return err
	}
	c.closed = true
	if c.pending {
		c.pending = false
		c.l.settled(c.key)
	}
	c.l.mu.Lock()
	c.l.open--
	c.l.mu.Unlock()
	openConns.WithLabelValues(c.l.cfg.Name).Dec()
	return err
}

// NetConn is the connection under the count.
func (c *Conn) NetConn() net.Conn { return c.Conn }

// Client is the client's address as the listener counts it.
func (c *Conn) Client() netip.Prefix { return c.key }

func (l *Listener) settled(key netip.Prefix) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.pending--
	if key.IsValid() {
		if l.byAddr[key]--; l.byAddr[key] <= 0 {
			delete(l.byAddr, key)
		}
	}
}

// Established marks c Established if it is (or wraps, through NetConn)
// a listener's Conn; anything else is left alone.
func Established(c net.Conn) {
	for range 8 {
		if lc, ok := c.(*Conn); ok {
			lc.Established()
			return
		}
		u, ok := c.(interface{ NetConn() net.Conn })
		if !ok {
			return
		}
		c = u.NetConn()
	}
}

// ClientKey is the client a remote address is counted as: an IPv4
// address alone, an IPv6 one by its /64 (one host is given a whole /64,
// so counting single IPv6 addresses would bound nothing). Invalid for an
// address that is not TCP (a Unix socket's).
func ClientKey(a net.Addr) netip.Prefix {
	ta, ok := a.(*net.TCPAddr)
	if !ok {
		return netip.Prefix{}
	}
	return AddrKey(ta.AddrPort().Addr())
}

// AddrKey is ClientKey of an IP address.
func AddrKey(ip netip.Addr) netip.Prefix {
	ip = ip.Unmap()
	if ip.Is4() {
		return netip.PrefixFrom(ip, 32)
	}
	p, err := ip.Prefix(64)
	if err != nil {
		return netip.Prefix{}
	}
	return p
}

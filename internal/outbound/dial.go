package outbound

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"strconv"
	"syscall"
)

// Resolver looks up a host's addresses; *net.Resolver is one.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// guard is the dial-time check: it resolves a name itself, refuses it if
// any address it resolves to is not public, and connects only to the
// addresses it checked; the socket's Control hook checks the exact
// address being connected once more, so nothing (a rebinding name, an
// address this code forgot to check) reaches an inside address.
type guard struct {
	allowPrivate bool
	resolver     Resolver
	dialer       net.Dialer
	// exempt lets one address through as if it were public: set only by
	// this package's tests, to stand a loopback server in for a public
	// one.
	exempt netip.AddrPort
}

func newGuard(cfg Config) *guard {
	g := &guard{allowPrivate: cfg.AllowPrivate, resolver: cfg.Resolver}
	g.dialer = net.Dialer{Timeout: cfg.DialTimeout, KeepAlive: cfg.IdleTimeout, Control: g.control}
	return g
}

// control runs on every socket before it connects, with the IP address
// and port it connects to.
func (g *guard) control(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return &Error{Kind: KindRefused, Host: address, Reason: "the dialled address is not an IP address"}
	}
	return g.check(ap.Addr().String(), ap.Addr(), ap.Port())
}

func (g *guard) check(host string, a netip.Addr, port uint16) error {
	if g.allowPrivate || (g.exempt.IsValid() && g.exempt == netip.AddrPortFrom(a.Unmap(), port)) {
		return nil
	}
	if reason := RefusedReason(a); reason != "" {
		return &Error{Kind: KindRefused, Host: host, Addr: a.String(), Reason: reason}
	}
	return nil
}

// resolve returns the checked addresses of host (a name or IP literal)
// for a connection to port.
func (g *guard) resolve(ctx context.Context, host string, port uint16) ([]netip.Addr, error) {
	var addrs []netip.Addr
	if a, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{a}
	} else {
		addrs, err = g.resolver.LookupNetIP(ctx, "ip", host)
		if err != nil {
			return nil, &Error{Kind: KindNetwork, Host: host, Err: err}
		}
		if len(addrs) == 0 {
			return nil, &Error{Kind: KindNetwork, Host: host, Err: errors.New("no addresses")}
		}
	}
	// One inside address refuses the name: a name that points both out
	// and in is not one Jobbie calls.
	for _, a := range addrs {
		if err := g.check(host, a, port); err != nil {
			return nil, err
		}
	}
	return addrs, nil
}

// DialContext is the transport's dialer: addr is the URL's "host:port".
func (g *guard) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, &Error{Kind: KindNetwork, Host: addr, Err: err}
	}
	p, err := strconv.ParseUint(port, 10, 16)
	if err != nil {
		return nil, &Error{Kind: KindNetwork, Host: addr, Err: err}
	}
	addrs, err := g.resolve(ctx, host, uint16(p))
	if err != nil {
		return nil, err
	}
	var errs []error
	for _, a := range addrs {
		conn, err := g.dialer.DialContext(ctx, network, net.JoinHostPort(a.Unmap().String(), port))
		if err == nil {
			return conn, nil
		}
		var oe *Error
		if errors.As(err, &oe) {
			oe.Host = host
			return nil, oe
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	return nil, &Error{Kind: KindNetwork, Host: host, Err: errors.Join(errs...)}
}

package shardclient

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"strings"

	"github.com/jobbie/jobbie/internal/pki"
)

// Tunnel opens connections to self-hosted shard nodes that dialed in
// (tunnel.Registry in the hosted process). A node reached through it has
// the address tunnel.Addr(shard, node), "tunnel://<shard>/<node>". The
// connections must report the tunnel's TLS state (ConnectionState, as
// the registry's do), which is how the node is known.
//
// This package does not import internal/tunnel, whose tests import it.
type Tunnel interface {
	// Dial opens a stream to the node of a tunnel address.
	Dial(addr string) (net.Conn, error)
	// DialContext opens a stream to a node, giving up when ctx ends.
	DialContext(ctx context.Context, shard, node string) (net.Conn, error)
}

// tunnelDest is the node a tunnel pool reaches, and who it must be.
type tunnelDest struct {
	t           Tunnel
	shard, node string
	expect      pki.Policy
}

// tunnelAddr reads a tunnel address for a route of shard ("": a node
// reached by address alone). A route's node must be of that shard: an
// address naming another shard is refused here, before any request.
func (ns *nodes) tunnelAddr(addr, shard string) (*tunnelDest, error) {
	s, n, ok := parseTunnelAddr(addr)
	if !ok {
		return nil, fmt.Errorf("shardclient: shard address %q is not tunnel://<shard>/<node>", addr)
	}
	if shard != "" && s != shard {
		return nil, fmt.Errorf("shardclient: tunnel address %q is a node of shard %s, not of shard %s", addr, s, shard)
	}
	if ns.cfg.Tunnel == nil {
		return nil, fmt.Errorf("shardclient: shard address %q needs a tunnel, and this process has none", addr)
	}
	return &tunnelDest{t: ns.cfg.Tunnel, shard: s, node: n, expect: ns.expect(shard)}, nil
}

// dial opens a stream and checks whom it reached, as the TLS
// configuration of a TCP pool does in its handshake: the tunnel's TLS
// peer must be the node the address names and satisfy the pool's policy.
// A refusal is a dial error (nothing was sent, see Sent).
func (d *tunnelDest) dial(ctx context.Context) (net.Conn, error) {
	c, err := d.t.DialContext(ctx, d.shard, d.node)
	if err != nil {
		return nil, err
	}
	if err := d.check(c); err != nil {
		_ = c.Close()
		return nil, &net.OpError{Op: "dial", Net: "tunnel", Addr: c.RemoteAddr(), Err: err}
	}
	return c, nil
}

func (d *tunnelDest) check(c net.Conn) error {
	addr := tunnelScheme + d.shard + "/" + d.node
	tc, ok := c.(interface{ ConnectionState() tls.ConnectionState })
	if !ok {
		return &pki.PeerError{Err: fmt.Errorf("shardclient: the tunnel to %s gave a connection without its TLS state", addr)}
	}
	st := tc.ConnectionState()
	id, ok := pki.PeerIdentity(&st)
	if !ok {
		return &pki.PeerError{Err: fmt.Errorf("shardclient: the tunnel to %s names no peer identity", addr)}
	}
	if id.Role != pki.RoleShard || id.Shard != d.shard || id.Node != d.node {
		return &pki.PeerError{Err: fmt.Errorf("shardclient: the tunnel to %s reached %s", addr, id)}
	}
	if err := d.expect(id); err != nil {
		return &pki.PeerError{Err: err}
	}
	return nil
}

// parseTunnelAddr reads "tunnel://<shard>/<node>", the format of
// tunnel.Addr and tunnel.ParseAddr (TestTunnelAddrFormat keeps them one).
func parseTunnelAddr(addr string) (shard, node string, ok bool) {
	rest, found := strings.CutPrefix(addr, tunnelScheme)
	if !found {
		return "", "", false
	}
	shard, node, found = strings.Cut(rest, "/")
	if !found || (pki.Identity{Role: pki.RoleShard, Shard: shard, Node: node}).Validate() != nil {
		return "", "", false
	}
	return shard, node, true
}

// Package conncheck tells whether the peer of a connection has gone,
// without reading from it: a long-poll does not read its connection while
// it waits, and neither fasthttp nor net/http says when the client hangs
// up, so a job could be leased to a worker that is no longer there.
package conncheck

import (
	"net"
	"syscall"
)

// Gone reports whether the peer of conn has closed or reset it. It looks
// through wrappers that expose NetConn (TLS, counting listeners) to the
// socket. A connection that knows itself (a Goner: a request on a shard
// link, whose caller cancels it or whose link ends) is asked instead.
// Where it cannot look (no socket, or a platform it does not know) the
// peer reads as there, and a lease its worker never received runs out
// instead.
func Gone(conn net.Conn) bool {
	if g, ok := conn.(Goner); ok {
		return g.Gone()
	}
	rc, ok := rawConn(conn)
	if !ok {
		return false
	}
	gone := false
	_ = rc.Control(func(fd uintptr) { gone = fdGone(fd) })
	return gone
}

// Goner is a connection that says itself whether its peer is gone.
type Goner interface{ Gone() bool }

func rawConn(conn net.Conn) (syscall.RawConn, bool) {
	for range 8 {
		if sc, ok := conn.(syscall.Conn); ok {
			rc, err := sc.SyscallConn()
			return rc, err == nil
		}
		u, ok := conn.(interface{ NetConn() net.Conn })
		if !ok {
			return nil, false
		}
		conn = u.NetConn()
	}
	return nil, false
}

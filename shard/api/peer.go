package api

import (
	"net"
	"syscall"

	"github.com/gofiber/fiber/v2"

	"github.com/jobbie/jobbie/shard/service"
)

// fasthttp tells a handler nothing when its client hangs up, and a
// long-poll does not read the connection while it waits. peerGone looks
// instead: a non-blocking peek (MSG_PEEK|MSG_DONTWAIT) of one byte, one
// syscall that consumes nothing. 0 bytes is an orderly close; EAGAIN is an
// open, quiet connection; data waiting (a pipelined request, or TLS
// records) reads as open. It works for TCP and Unix sockets; where the
// connection gives no file descriptor it says the peer is there.

// clientGone returns the service's Gone for the connection of c.
func clientGone(c *fiber.Ctx) service.Gone {
	conn := c.Context().Conn()
	return func() bool { return peerGone(conn) }
}

// rawConn finds the socket under conn: TLS wraps it (NetConn).
func rawConn(conn net.Conn) (syscall.RawConn, bool) {
	for range 4 {
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

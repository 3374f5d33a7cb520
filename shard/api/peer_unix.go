//go:build linux || darwin || freebsd || netbsd || openbsd

package api

import (
	"errors"
	"net"
	"syscall"
)

// peerGone reports whether the peer of conn has closed or reset it.
func peerGone(conn net.Conn) bool {
	rc, ok := rawConn(conn)
	if !ok {
		return false
	}
	gone := false
	var b [1]byte
	_ = rc.Control(func(fd uintptr) {
		n, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		switch {
		case err == nil:
			gone = n == 0
		case errors.Is(err, syscall.EAGAIN), errors.Is(err, syscall.EWOULDBLOCK), errors.Is(err, syscall.EINTR):
		default:
			gone = true // reset, or no longer a connection
		}
	})
	return gone
}

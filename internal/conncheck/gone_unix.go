//go:build darwin || freebsd || netbsd || openbsd

package conncheck

import (
	"errors"
	"syscall"
)

// fdGone peeks one byte without blocking: 0 bytes is an orderly close,
// EAGAIN an open, quiet connection; data waiting reads as open (so a
// TLS client's close_notify hides its close here; Linux looks deeper).
func fdGone(fd uintptr) bool {
	var b [1]byte
	n, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
	switch {
	case err == nil:
		return n == 0
	case errors.Is(err, syscall.EAGAIN), errors.Is(err, syscall.EWOULDBLOCK), errors.Is(err, syscall.EINTR):
		return false
	}
	return true // reset, or no longer a connection
}

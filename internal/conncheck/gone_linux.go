package conncheck

import "golang.org/x/sys/unix"

// fdGone polls the socket for POLLRDHUP: the peer shut its side down (or
// reset it) even when data it sent before is still unread. That matters
// under TLS, where a client closing sends a close_notify record first: a
// peek would see data and take the peer for alive.
func fdGone(fd uintptr) bool {
	pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLRDHUP}}
	n, err := unix.Poll(pfd, 0)
	if err != nil || n == 0 {
		return false
	}
	return pfd[0].Revents&(unix.POLLRDHUP|unix.POLLHUP|unix.POLLERR|unix.POLLNVAL) != 0
}

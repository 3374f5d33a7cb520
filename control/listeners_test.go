package control

import (
	"net"
	"net/http"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/listen"
)

// flakyListener fails every accept with EMFILE while failing is set.
type flakyListener struct {
	net.Listener
	failing atomic.Bool
}

func (f *flakyListener) Accept() (net.Conn, error) {
	if f.failing.Load() {
		return nil, &net.OpError{Op: "accept", Net: "tcp", Err: syscall.EMFILE}
	}
	return f.Listener.Accept()
}

// /readyz fails, naming the listener and its error, while a listener of
// the node's group cannot accept (in `jobbie dev` the group holds every
// role's), and is 200 again once it accepts.
func TestNotReadyWhileAListenerCannotAccept(t *testing.T) {
	t.Parallel()
	group := listen.NewGroup()
	b := setup(t, func(c *Config) { c.Listeners = group })
	require.Equal(t, http.StatusOK, b.do(t, http.MethodGet, "/readyz", "", nil).status)

	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	flaky := &flakyListener{Listener: tcp}
	flaky.failing.Store(true)
	ln := listen.New(flaky, listen.Config{Name: "public", Group: group})
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	var r response
	require.Eventually(t, func() bool {
		r = b.do(t, http.MethodGet, "/readyz", "", nil)
		return r.status == http.StatusServiceUnavailable
	}, 30*time.Second, 10*time.Millisecond)
	require.Contains(t, string(r.body), `"code":"unavailable"`)
	require.Contains(t, string(r.body), "the public listener ("+tcp.Addr().String()+") cannot accept connections")
	require.Contains(t, string(r.body), "too many open files")

	flaky.failing.Store(false)
	c, err := net.Dial("tcp", tcp.Addr().String())
	require.NoError(t, err)
	defer c.Close()
	require.Eventually(t, func() bool { return b.do(t, http.MethodGet, "/readyz", "", nil).status == http.StatusOK }, 30*time.Second,
		10*time.Millisecond, "ready again once the listener accepts")
}

package shard

import (
	"net"
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
// the node's group cannot accept (here one beside the node, as a
// self-hosted node's local API is), and is 200 again once it accepts.
func TestNotReadyWhileAListenerCannotAccept(t *testing.T) {
	t.Parallel()
	group := listen.NewGroup()
	b := setup(t, func(c *Config) { c.Listeners = group })
	require.Same(t, group, b.srv.Listeners())
	require.Equal(t, 200, b.call("GET", "/readyz", nil).Status)

	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	flaky := &flakyListener{Listener: tcp}
	flaky.failing.Store(true)
	ln := listen.New(flaky, listen.Config{Name: "local API", Group: group})
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
	require.Eventually(t, func() bool {
		r := b.call("GET", "/readyz", nil)
		return r.Status == 503 && errCode(r) == "unavailable"
	}, 30*time.Second, 10*time.Millisecond)
	r := b.call("GET", "/readyz", nil)
	require.Contains(t, string(r.Raw), "the local API listener ("+tcp.Addr().String()+") cannot accept connections")
	require.Contains(t, string(r.Raw), "too many open files")
	require.Equal(t, "1", r.Header.Get("Retry-After"))

	flaky.failing.Store(false)
	c, err := net.Dial("tcp", tcp.Addr().String())
	require.NoError(t, err)
	defer c.Close()
	require.Eventually(t, func() bool { return b.call("GET", "/readyz", nil).Status == 200 }, 30*time.Second, 10*time.Millisecond,
		"ready again once the listener accepts")
}

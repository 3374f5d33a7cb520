package conncheck

import (
	"crypto/tls"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/leakcheck"
	"github.com/jobbie/jobbie/internal/pki/pkitest"
)

func TestMain(m *testing.M) { leakcheck.VerifyTestMain(m) }

// pair returns the server side of a fresh connection and the client side.
func pair(t *testing.T, ln net.Listener, dial func() (net.Conn, error)) (server, client net.Conn) {
	t.Helper()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err == nil {
			if tc, ok := c.(*tls.Conn); ok {
				_ = tc.Handshake()
			}
		}
		accepted <- c
	}()
	client, err := dial()
	require.NoError(t, err)
	server = <-accepted
	require.NotNil(t, server)
	t.Cleanup(func() { _ = server.Close(); _ = client.Close() })
	return server, client
}

func waitGone(t *testing.T, c net.Conn) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !Gone(c) {
		require.True(t, time.Now().Before(deadline), "the close was not seen")
		time.Sleep(5 * time.Millisecond)
	}
}

func TestTCP(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	server, client := pair(t, ln, func() (net.Conn, error) { return net.Dial("tcp", ln.Addr().String()) })
	require.False(t, Gone(server), "open and quiet")
	_, err = client.Write([]byte("GET / HTTP/1.1\r\n"))
	require.NoError(t, err)
	require.False(t, Gone(server), "data waiting is a live client (a pipelined request)")
	require.NoError(t, client.Close())
	waitGone(t, server)
}

// A TLS client's close sends close_notify before its FIN: the data
// waiting must not hide the close.
func TestTLSCloseNotify(t *testing.T) {
	ca := pkitest.New(t)
	srv := ca.Creds(t, pkitest.Shard("s1", "n1"))
	cli := ca.Creds(t, pkitest.Gateway)
	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ln := tls.NewListener(tcp, srv.Server(nil))
	defer ln.Close()
	server, client := pair(t, ln, func() (net.Conn, error) { return tls.Dial("tcp", tcp.Addr().String(), cli.Client(nil)) })
	require.False(t, Gone(server), "open and quiet")
	require.NoError(t, client.Close())
	waitGone(t, server)
}

func TestNoSocket(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	require.False(t, Gone(a), "no socket to look at: taken to be there")
}

type goner struct {
	net.Conn
	gone bool
}

func (g goner) Gone() bool { return g.gone }

// A connection that says whether its peer is gone (a request on a shard
// link) is asked, not looked through.
func TestGoner(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	require.False(t, Gone(goner{Conn: a}))
	require.True(t, Gone(goner{Conn: a, gone: true}))
}

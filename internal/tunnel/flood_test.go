package tunnel

import (
	"errors"
	"io"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/listen"
	"github.com/jobbie/jobbie/internal/pki/pkitest"
)

// closedSoon reports whether the registry closes c within waitFor.
func closedSoon(c net.Conn) bool {
	_ = c.SetReadDeadline(time.Now().Add(waitFor))
	_, err := c.Read(make([]byte, 1))
	return errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET)
}

// Connections without a certificate that never start their handshake are
// bounded: over listen.DefaultMaxPendingPerAddr from one address the next
// is closed at once (the handshake deadline here is longer than the
// wait), and one that stays silent is closed at the deadline.
func TestSilentConnectionsAreCappedAndTimedOut(t *testing.T) {
	t.Parallel()
	ca := pkitest.New(t)
	h := startRegistry(t, ca.Creds(t, pkitest.Gateway), "127.0.0.1:0",
		func(c *RegistryConfig) { c.HandshakeTimeout = 10 * waitFor })
	var silent []net.Conn
	defer func() {
		for _, c := range silent {
			c.Close()
		}
	}()
	for range listen.DefaultMaxPendingPerAddr {
		c, err := net.Dial("tcp", h.addr)
		require.NoError(t, err)
		silent = append(silent, c)
	}
	over, err := net.Dial("tcp", h.addr)
	require.NoError(t, err)
	defer over.Close()
	require.True(t, closedSoon(over), "the connection over the per-address cap is closed at once")

	// Once one of them goes, a node from that address connects.
	require.NoError(t, silent[0].Close())
	a, _ := startAgent(t, ca.Creds(t, pkitest.Shard("s1", "n1")), h.addr, whoami)
	waitAgent(t, a, "connected", connected)

	quick := startRegistry(t, ca.Creds(t, pkitest.Gateway), "127.0.0.1:0",
		func(c *RegistryConfig) { c.HandshakeTimeout = 200 * time.Millisecond })
	c, err := net.Dial("tcp", quick.addr)
	require.NoError(t, err)
	defer c.Close()
	require.True(t, closedSoon(c), "a connection that never finishes its handshake is closed at the deadline")
}

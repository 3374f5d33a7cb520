package freeport

import (
	"net"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestLoopbackPicksDistinctBindablePortsInRange(t *testing.T) {
	addrs, err := Loopback(20)
	require.NoError(t, err)
	require.Len(t, addrs, 20)
	seen := map[string]bool{}
	for _, a := range addrs {
		require.False(t, seen[a], "duplicate %s", a)
		seen[a] = true
		host, port, err := net.SplitHostPort(a)
		require.NoError(t, err)
		require.Equal(t, "127.0.0.1", host)
		p, err := strconv.Atoi(port)
		require.NoError(t, err)
		require.True(t, p >= Low && p < High, "port %d", p)
		l, err := net.Listen("tcp", a) // released: a process can bind it
		require.NoError(t, err)
		require.NoError(t, l.Close())
	}
}

// A test binds its ports only as it starts its processes: a later pick,
// from a parallel test, never hands one out again.
func TestLoopbackNeverRepeatsAnAddress(t *testing.T) {
	seen := map[string]bool{}
	for range 50 {
		addrs, err := Loopback(20) // 1,000 of the 11,000: a repeat is near certain if picks forgot
		require.NoError(t, err)
		for _, a := range addrs {
			require.False(t, seen[a], "%s handed out twice", a)
			seen[a] = true
		}
	}
}

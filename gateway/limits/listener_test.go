package limits

import (
	"io"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/listen"
)

// A connection answered before its request was read whole closes by
// lingering (FIN, then draining what the client still sends), which needs
// the TCP connection under the listener's wrappers: without it the close
// resets the connection and the client may lose the answer.
func TestALingeringCloseFindsItsTCPConnection(t *testing.T) {
	t.Parallel()
	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ln := NewListener(tcp, 0, listen.Config{Name: "public", Logger: slog.New(slog.DiscardHandler)})
	defer ln.Close()
	client, err := net.Dial("tcp", tcp.Addr().String())
	require.NoError(t, err)
	defer client.Close()
	nc, err := ln.Accept()
	require.NoError(t, err)
	c, ok := nc.(*conn)
	require.True(t, ok, "the listener's connection is %T", nc)
	_, ok = tcpOf(c.Conn)
	require.True(t, ok, "no TCP connection under %T", c.Conn)

	// The client is still sending when the server answers and closes:
	// the close drains it and ends with FIN, so the answer is read whole.
	c.linger = true
	go func() { _, _ = client.Write(make([]byte, 256<<10)) }()
	_, err = c.Write([]byte("HTTP/1.1 431 Request Header Fields Too Large\r\n\r\n"))
	require.NoError(t, err)
	require.NoError(t, c.Close())
	require.NoError(t, client.SetReadDeadline(time.Now().Add(10*time.Second)))
	got, err := io.ReadAll(client)
	require.NoError(t, err, "the close reset the connection")
	require.Contains(t, string(got), "431")
}

package gateway

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/apierr"
)

// rawConn is a client connection to the gateway's public port that
// speaks HTTP/1.1 by hand, so the test sees every byte the gateway
// sends, asked for or not.
type rawConn struct {
	net.Conn
	r *bufio.Reader
}

func dialRaw(t *testing.T, addr string) *rawConn {
	t.Helper()
	c := dial(t, addr, 1)[0]
	return &rawConn{Conn: c, r: bufio.NewReader(c)}
}

// get sends GET path on the connection, keeping it alive, and reads the
// answer.
func (c *rawConn) get(t *testing.T, path string) (*http.Response, error) {
	t.Helper()
	require.NoError(t, c.SetDeadline(time.Now().Add(10*time.Second)))
	if _, err := io.WriteString(c, "GET "+path+" HTTP/1.1\r\nHost: gateway\r\n\r\n"); err != nil {
		return nil, err
	}
	res, err := http.ReadResponse(c.r, nil)
	if err != nil {
		return nil, err
	}
	_, err = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res, err
}

// unsolicited waits up to d for the gateway to send or close: it returns
// what the gateway sent, and closed=false if the connection is still open
// with nothing sent.
func (c *rawConn) unsolicited(t *testing.T, d time.Duration) (sent []byte, closed bool) {
	t.Helper()
	require.NoError(t, c.SetReadDeadline(time.Now().Add(d)))
	sent, err := io.ReadAll(c.r)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return sent, false
	}
	return sent, true
}

// A keep-alive connection idle longer than ReadTimeout (but within
// IdleTimeout) still serves the client's next request: ReadTimeout
// bounds reading a request, not waiting for one.
func TestAKeepAliveConnectionIdlePastReadTimeoutStillServes(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *Config) { c.ReadTimeout, c.IdleTimeout = 200*time.Millisecond, 5*time.Second })
	c := dialRaw(t, b.gw.Addr())
	res, err := c.get(t, "/healthz")
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, res.StatusCode)
	sent, closed := c.unsolicited(t, 4*200*time.Millisecond)
	require.Empty(t, string(sent), "the gateway answered a request the client did not send")
	require.False(t, closed, "closed within IdleTimeout")
	res, err = c.get(t, "/healthz")
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, res.StatusCode)
}

// A keep-alive connection idle past IdleTimeout is closed without a
// word: any answer would be read by the client as the answer to its next
// request.
func TestAnIdleKeepAliveConnectionIsClosedSilently(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *Config) { c.ReadTimeout, c.IdleTimeout = 200*time.Millisecond, 300*time.Millisecond })
	c := dialRaw(t, b.gw.Addr())
	res, err := c.get(t, "/healthz")
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, res.StatusCode)
	sent, closed := c.unsolicited(t, 10*time.Second)
	require.True(t, closed, "an idle connection is closed after IdleTimeout")
	require.Empty(t, string(sent), "the gateway answered a request the client did not send")
}

// A connection that never sends a request (a client's pool dials one it
// then has no use for) is closed without a word after ReadTimeout, as an
// idle keep-alive connection is, not answered with a timeout error the
// client would take for the answer to its first request.
func TestAConnectionThatSendsNothingIsClosedSilently(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *Config) { c.ReadTimeout, c.IdleTimeout = 200*time.Millisecond, 5*time.Second })
	c := dialRaw(t, b.gw.Addr())
	sent, closed := c.unsolicited(t, 10*time.Second)
	require.True(t, closed, "a connection that sends nothing is closed after ReadTimeout")
	require.Empty(t, string(sent), "the gateway answered a request the client did not send")
}

// A request whose headers trickle in past ReadTimeout hears why it
// failed, and the connection is closed.
func TestARequestSlowerThanReadTimeoutHearsWhy(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *Config) { c.ReadTimeout, c.IdleTimeout = 200*time.Millisecond, 5*time.Second })
	for _, first := range []bool{true, false} {
		c := dialRaw(t, b.gw.Addr())
		if !first { // on a keep-alive connection, after one request
			res, err := c.get(t, "/healthz")
			require.NoError(t, err)
			require.Equal(t, http.StatusOK, res.StatusCode)
		}
		_, err := io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: gate")
		require.NoError(t, err)
		require.NoError(t, c.SetReadDeadline(time.Now().Add(10*time.Second)))
		res, err := http.ReadResponse(c.r, nil)
		require.NoError(t, err)
		raw, err := io.ReadAll(res.Body)
		require.NoError(t, err)
		r := reply{status: res.StatusCode, header: res.Header, body: raw}
		e := r.requireError(t, http.StatusServiceUnavailable, apierr.Unavailable)
		require.Contains(t, e.Message, "timed out")
		require.True(t, res.Close, "the connection is closed")
	}
}

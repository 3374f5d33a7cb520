package apierr

import (
	"bufio"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"math/big"
	"net"
	"net/http"
	"syscall"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/stretchr/testify/require"
)

// selfSigned is a certificate for 127.0.0.1.
func selfSigned(t *testing.T) tls.Certificate {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// A server as a shard node's: Handler, ReadTimeout and IdleTimeout, TLS,
// behind QuietListener. A connection whose client completes the handshake
// and sends nothing is closed without an answer; one whose request stops
// half way hears 503 unavailable.
func TestQuietListenerClosesAConnectionThatSentNothingWithoutAWord(t *testing.T) {
	app := fiber.New(fiber.Config{ErrorHandler: Handler, DisableStartupMessage: true,
		ReadTimeout: 200 * time.Millisecond, IdleTimeout: 200 * time.Millisecond})
	app.Get("/", func(c *fiber.Ctx) error {
		if c.Context().TLSConnectionState() == nil {
			return c.SendString("no TLS state")
		}
		return c.SendString("ok")
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	served := make(chan error, 1)
	go func() {
		served <- app.Listener(QuietListener(tls.NewListener(ln, &tls.Config{Certificates: []tls.Certificate{selfSigned(t)}})))
	}()
	t.Cleanup(func() {
		require.NoError(t, app.Shutdown())
		require.NoError(t, <-served)
	})
	dial := func() (*tls.Conn, error) {
		c, err := tls.Dial("tcp", ln.Addr().String(), &tls.Config{InsecureSkipVerify: true})
		if err != nil {
			return nil, err
		}
		t.Cleanup(func() { c.Close() })
		require.NoError(t, c.SetDeadline(time.Now().Add(10*time.Second)))
		return c, nil
	}
	// ask sends req on a new connection and reads the answer. The 200 ms
	// ReadTimeout runs from the accept: on a loaded machine the handshake
	// or the request can come later, and the server then closes the
	// connection without a word, as it should, having read nothing of a
	// request. The client sees its dial or write fail, or the connection
	// end or reset before an answer, and dials again, as an HTTP client's
	// pool does with a connection closed before it answered.
	ask := func(req string) (*tls.Conn, *bufio.Reader, *http.Response) {
		for range 20 {
			c, err := dial()
			if err == nil {
				_, err = io.WriteString(c, req)
			}
			if err == nil {
				r := bufio.NewReader(c)
				var res *http.Response
				if res, err = http.ReadResponse(r, nil); err == nil {
					return c, r, res
				}
			}
			require.True(t, closedUnanswered(err), "%v", err)
		}
		t.Fatal("every connection was closed before the request was read")
		return nil, nil, nil
	}

	// A request is served, the TLS state in view (pki.Require reads it).
	_, r, res := ask("GET / HTTP/1.1\r\nHost: node\r\n\r\n")
	body, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	require.Equal(t, "ok", string(body))
	// Then, idle past IdleTimeout, it is closed without a word.
	got, err := io.ReadAll(r)
	require.NoError(t, err, "closed by the server")
	require.Empty(t, string(got), "an answer to a request the client did not send")

	// A connection that sends nothing: closed without a word, before
	// or after its handshake ended.
	got = nil
	c, err := dial()
	if err == nil {
		got, err = io.ReadAll(c)
	}
	require.True(t, err == nil || closedUnanswered(err), "closed by the server: %v", err)
	require.Empty(t, string(got), "an answer to a request the client did not send")

	_, _, res = ask("GET / HTTP/1.1\r\nHost: no")
	body, err = io.ReadAll(res.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusServiceUnavailable, res.StatusCode)
	require.Contains(t, string(body), `"code":"unavailable"`)
	require.Equal(t, "1", res.Header.Get("Retry-After"))
}

// closedUnanswered reports whether err is a connection the server closed
// before answering anything: ended, reset, or refusing a write.
func closedUnanswered(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

package apierr

import (
	"bufio"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"io"
	"math/big"
	"net"
	"net/http"
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
	dial := func() *tls.Conn {
		c, err := tls.Dial("tcp", ln.Addr().String(), &tls.Config{InsecureSkipVerify: true})
		require.NoError(t, err)
		t.Cleanup(func() { c.Close() })
		require.NoError(t, c.SetDeadline(time.Now().Add(10*time.Second)))
		return c
	}

	// A request is served, the TLS state in view (pki.Require reads it).
	c := dial()
	_, err = io.WriteString(c, "GET / HTTP/1.1\r\nHost: node\r\n\r\n")
	require.NoError(t, err)
	r := bufio.NewReader(c)
	res, err := http.ReadResponse(r, nil)
	require.NoError(t, err)
	body, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	require.Equal(t, "ok", string(body))
	// Then, idle past IdleTimeout, it is closed without a word.
	got, err := io.ReadAll(r)
	require.NoError(t, err, "closed by the server")
	require.Empty(t, string(got), "an answer to a request the client did not send")

	got, err = io.ReadAll(dial())
	require.NoError(t, err, "closed by the server")
	require.Empty(t, string(got), "an answer to a request the client did not send")

	c = dial()
	_, err = io.WriteString(c, "GET / HTTP/1.1\r\nHost: no")
	require.NoError(t, err)
	res, err = http.ReadResponse(bufio.NewReader(c), nil)
	require.NoError(t, err)
	body, err = io.ReadAll(res.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusServiceUnavailable, res.StatusCode)
	require.Contains(t, string(body), `"code":"unavailable"`)
	require.Equal(t, "1", res.Header.Get("Retry-After"))
}

package apierr

import (
	"crypto/tls"
	"errors"
	"net"

	"github.com/gofiber/fiber/v2"
)

// QuietListener wraps a server's listener so that Handler can tell a
// read timeout before the client sent a byte from a request too slow to
// arrive. fasthttp answers a timeout on a connection's first request even
// when nothing of it came (it stays silent only on later, keep-alive
// ones), and a client whose pool dialled that connection and left it idle
// would read the answer as the one to the request it sends next; so
// Handler closes such a connection without a word. Wrap a TLS listener
// (tls.NewListener's), not the TCP one under it: the handshake is not a
// request.
func QuietListener(ln net.Listener) net.Listener { return quietListener{ln} }

type quietListener struct{ net.Listener }

func (l quietListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	q := &quietConn{Conn: c}
	if tc, ok := c.(tlsConn); ok {
		return quietTLSConn{q, tc}, nil
	}
	return q, nil
}

// tlsConn is what fasthttp looks for to find a connection's handshake
// and its peer's certificates (pki.Require reads them).
type tlsConn interface {
	Handshake() error
	ConnectionState() tls.ConnectionState
}

// quietTLSConn is a quietConn over TLS that still shows it.
type quietTLSConn struct {
	*quietConn
	tls tlsConn
}

func (c quietTLSConn) Handshake() error                     { return c.tls.Handshake() }
func (c quietTLSConn) ConnectionState() tls.ConnectionState { return c.tls.ConnectionState() }

// quietConn records whether its client sent a byte, and drops what is
// written once muted. Only the goroutine serving it reads and writes it.
type quietConn struct {
	net.Conn
	heard, muted bool
}

func (c *quietConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.heard = true
	}
	return n, err
}

func (c *quietConn) Write(p []byte) (int, error) {
	if c.muted {
		return len(p), nil
	}
	return c.Conn.Write(p)
}

func (c *quietConn) quiet() *quietConn { return c }

// NetConn is the connection under it, for those that look through
// wrappers (conncheck, the gateway's connection limits).
func (c *quietConn) NetConn() net.Conn { return c.Conn }

// silenced mutes c's connection if it timed out before its client sent a
// byte, and says whether it did.
func silenced(c *fiber.Ctx, err error) bool {
	var fe *fiber.Error
	if !errors.As(err, &fe) || fe.Code != fiber.StatusRequestTimeout {
		return false
	}
	conn := c.Context().Conn()
	for range 8 {
		if qc, ok := conn.(interface{ quiet() *quietConn }); ok {
			q := qc.quiet()
			if q.heard {
				return false
			}
			q.muted = true
			c.Context().SetConnectionClose()
			return true
		}
		u, ok := conn.(interface{ NetConn() net.Conn })
		if !ok {
			return false
		}
		conn = u.NetConn()
	}
	return false
}

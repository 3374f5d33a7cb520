package listen

import (
	"crypto/tls"
	"net"
	"sync"
)

// TLS is tls.NewListener over inner (a Listener) whose connections are
// Established once their handshake succeeds, which clears the handshake
// deadline. The handshake runs at the connection's first read or write,
// on its reader's goroutine (as tls.Conn's does), so a peer that stalls
// it holds only its own connection, and only until the deadline.
func TLS(inner net.Listener, cfg *tls.Config) net.Listener { return tlsListener{inner, cfg} }

type tlsListener struct {
	net.Listener
	cfg *tls.Config
}

func (l tlsListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &tlsConn{Conn: tls.Server(c, l.cfg), raw: c}, nil
}

// tlsConn is a server-side tls.Conn that reports its handshake.
type tlsConn struct {
	*tls.Conn
	raw  net.Conn
	once sync.Once
	err  error
}

// Handshake runs the handshake once and marks the connection
// Established if it succeeded.
func (c *tlsConn) Handshake() error {
	c.once.Do(func() {
		if c.err = c.Conn.Handshake(); c.err == nil {
			Established(c.raw)
		}
	})
	return c.err
}

func (c *tlsConn) Read(p []byte) (int, error) {
	if err := c.Handshake(); err != nil {
		return 0, err
	}
	return c.Conn.Read(p)
}

func (c *tlsConn) Write(p []byte) (int, error) {
	if err := c.Handshake(); err != nil {
		return 0, err
	}
	return c.Conn.Write(p)
}

// NetConn is the connection under TLS.
func (c *tlsConn) NetConn() net.Conn { return c.raw }

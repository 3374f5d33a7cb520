package tunnel

import (
	"fmt"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/hashicorp/yamux"
)

// Keep-alive defaults: a silent link is found dead within about
// interval + timeout, on both sides.
const (
	defaultKeepAliveInterval = 15 * time.Second
	defaultKeepAliveTimeout  = 10 * time.Second
)

// muxConfig is the yamux configuration both sides use. timeout bounds
// a keep-alive's answer and any write of the tunnel; a session whose
// ping goes unanswered closes.
func muxConfig(interval, timeout time.Duration, log *slog.Logger) *yamux.Config {
	c := yamux.DefaultConfig()
	c.EnableKeepAlive = true
	c.KeepAliveInterval = interval
	c.ConnectionWriteTimeout = timeout
	// A stream the peer never acknowledges means a dead peer: the session
	// closes (and the agent reconnects) rather than waiting 75 s.
	c.StreamOpenTimeout = interval + timeout
	// Every waiting long-poll is one stream; a burst of new ones must
	// not be refused while the other side accepts.
	c.AcceptBacklog = 1024
	c.LogOutput = nil
	c.Logger = muxLogger{log}
	return c
}

// muxLogger sends yamux's log lines to slog.
type muxLogger struct{ l *slog.Logger }

func (m muxLogger) Print(v ...any)                 { m.l.Warn("tunnel: " + fmt.Sprint(v...)) }
func (m muxLogger) Printf(format string, v ...any) { m.l.Warn("tunnel: " + fmt.Sprintf(format, v...)) }
func (m muxLogger) Println(v ...any)               { m.l.Warn("tunnel: " + fmt.Sprint(v...)) }

// causeConn keeps the first error the tunnel's connection met, which
// yamux does not tell: why a session ended (the peer refused the
// certificate, the link reset) is what an operator needs to see.
type causeConn struct {
	net.Conn
	mu  sync.Mutex
	err error
}

func (c *causeConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	c.note(err)
	return n, err
}

func (c *causeConn) Write(b []byte) (int, error) {
	n, err := c.Conn.Write(b)
	c.note(err)
	return n, err
}

func (c *causeConn) note(err error) {
	if err == nil {
		return
	}
	c.mu.Lock()
	if c.err == nil {
		c.err = err
	}
	c.mu.Unlock()
}

func (c *causeConn) cause() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

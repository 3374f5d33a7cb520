package replica

import (
	"net"
	"sync"
)

// inbound keeps the connections the Raft stream accepted until their
// handlers are done. Raft's NetworkTransport runs each accepted
// connection's handler on a goroutine of its own, which it neither stops
// nor waits for; the handler closes its connection as the last thing it
// does, so that Close is the signal that it no longer touches raft.
type inbound struct {
	mu       sync.Mutex
	closed   bool
	conns    map[*inboundConn]struct{}
	handlers sync.WaitGroup // one per connection its handler has not closed
}

// inboundConn is an accepted connection; its Close, which its handler
// calls as it ends, counts the handler out.
type inboundConn struct {
	net.Conn
	in   *inbound
	once sync.Once
}

// track counts c in, or closes it if the stream is closed.
func (in *inbound) track(c net.Conn) (net.Conn, error) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.closed {
		_ = c.Close()
		return nil, net.ErrClosed
	}
	if in.conns == nil {
		in.conns = map[*inboundConn]struct{}{}
	}
	ic := &inboundConn{Conn: c, in: in}
	in.conns[ic] = struct{}{}
	in.handlers.Add(1)
	return ic, nil
}

// close closes every tracked connection under its handler, which makes
// the handler's next read or write fail, and waits until each handler has
// closed its own. A handler in the middle of an RPC finishes it first,
// while the stores are still open.
func (in *inbound) close() {
	in.mu.Lock()
	in.closed = true
	conns := make([]net.Conn, 0, len(in.conns))
	for c := range in.conns {
		conns = append(conns, c.Conn)
	}
	in.mu.Unlock()
	for _, c := range conns {
		_ = c.Close() // not c's own Close: that is the handler's to call
	}
	in.handlers.Wait()
}

func (c *inboundConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() {
		c.in.mu.Lock()
		delete(c.in.conns, c)
		c.in.mu.Unlock()
		c.in.handlers.Done()
	})
	return err
}

// NetConn is the connection under the count, so wrappers can be seen
// through (listen.Established).
func (c *inboundConn) NetConn() net.Conn { return c.Conn }

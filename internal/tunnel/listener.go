package tunnel

import (
	"context"
	"net"
	"net/http"
	"sync"
)

// listener hands an agent's accepted streams, from whichever session is
// live, to a server's Accept loop. It outlives reconnections, so a server
// serves it once for the agent's whole life.
type listener struct {
	addr  net.Addr
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func newListener(addr net.Addr) *listener {
	return &listener{addr: addr, conns: make(chan net.Conn), done: make(chan struct{})}
}

func (l *listener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

// Close ends Accept (a server's shutdown closes its listener) and with it
// the agent's Run: nothing would serve the hosted side's streams.
func (l *listener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

func (l *listener) Addr() net.Addr { return l.addr }

// feed passes the streams a session accepts to Accept until the session
// or the listener closes.
func (l *listener) feed(set *streams) {
	for {
		st, err := set.mux.AcceptStream()
		if err != nil {
			return
		}
		c := set.wrap(st)
		select {
		case l.conns <- c:
		case <-l.done:
			_ = c.Close()
			return
		case <-set.mux.CloseChan():
			_ = c.Close()
			return
		}
	}
}

// connKey keeps a request's connection in its context (http.Server's
// ConnContext), where withTLS finds the tunnel's TLS state.
type connKey struct{}

// withTLS gives h's requests the tunnel's TLS state as r.TLS, which
// net/http sets for *tls.Conn only, so pki.PeerIdentity(r.TLS) names the
// hosted peer as it would on a direct connection.
func withTLS(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.TLS == nil {
			if c, ok := r.Context().Value(connKey{}).(net.Conn); ok {
				if st, ok := ConnState(c); ok {
					r2 := new(http.Request)
					*r2 = *r
					r2.TLS = st
					r = r2
				}
			}
		}
		h.ServeHTTP(w, r)
	})
}

func withConn(ctx context.Context, c net.Conn) context.Context {
	return context.WithValue(ctx, connKey{}, c)
}

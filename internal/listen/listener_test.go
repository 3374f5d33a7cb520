package listen

import (
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/netip"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/pki"
	"github.com/jobbie/jobbie/internal/pki/pkitest"
)

// scripted is a net.Listener whose Accept returns what the test sends,
// and tells the test each time it was asked.
type scripted struct {
	net.Listener // the address; Accept is scripted
	results      chan result
	asked        chan struct{}
	closed       chan struct{}
}

type result struct {
	c   net.Conn
	err error
}

func newScripted(t *testing.T) *scripted {
	real, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = real.Close() })
	return &scripted{Listener: real, results: make(chan result), asked: make(chan struct{}, 100), closed: make(chan struct{})}
}

func (s *scripted) Accept() (net.Conn, error) {
	s.asked <- struct{}{}
	select {
	case r := <-s.results:
		return r.c, r.err
	case <-s.closed:
		return nil, net.ErrClosed
	}
}

func (s *scripted) Close() error {
	select {
	case <-s.closed:
	default:
		close(s.closed)
	}
	return nil
}

var emfile = &net.OpError{Op: "accept", Net: "tcp", Err: syscall.EMFILE}

func accepted(l *Listener) chan result {
	out := make(chan result, 1)
	go func() {
		c, err := l.Accept()
		out <- result{c, err}
	}()
	return out
}

func TestAcceptErrorsAreRetriedAndReported(t *testing.T) {
	t.Parallel()
	s := newScripted(t)
	g := NewGroup()
	l := New(s, Config{Name: "internal", Group: g})
	defer l.Close()
	require.Nil(t, g.Failing())

	got := accepted(l)
	for range 3 {
		<-s.asked
		s.results <- result{err: emfile}
	}
	<-s.asked // the fourth try, after three failures: Accept is still waiting
	f := g.Failing()
	require.NotNil(t, f, "the group reports the listener while its accepts fail")
	require.ErrorIs(t, f, syscall.EMFILE)
	require.Equal(t, "internal", f.Listener)
	require.Contains(t, f.Error(), "the internal listener (127.0.0.1:")
	require.Contains(t, f.Error(), "too many open files")

	a, b := net.Pipe()
	defer b.Close()
	s.results <- result{c: a}
	r := <-got
	require.NoError(t, r.err)
	require.Nil(t, g.Failing(), "one successful accept clears the failure")
	require.NoError(t, r.c.Close())
}

// A listener whose accepts failed and that then waits in Accept with
// nothing queued (the connection that met the error went away) is not
// failing any more, though no connection came to clear it: its failure
// ends once no failed accept renewed it for failureStale.
func TestAFailureNothingRenewsEnds(t *testing.T) {
	t.Parallel()
	s := newScripted(t)
	g := NewGroup()
	l := New(s, Config{Name: "tunnel", Group: g})
	l.stale = 100 * time.Millisecond
	defer l.Close()
	got := accepted(l)
	for range 2 {
		<-s.asked
		s.results <- result{err: emfile}
	}
	<-s.asked // waiting, with nothing to accept
	deadline := time.Now().Add(20 * time.Second)
	for g.Failing() != nil {
		require.True(t, time.Now().Before(deadline), "the failure never ended")
		time.Sleep(10 * time.Millisecond)
	}
	// A new failure is reported again, from its own time.
	before := time.Now()
	s.results <- result{err: emfile}
	<-s.asked
	f := l.failure.Load()
	require.NotNil(t, f)
	require.False(t, f.Since.Before(before), "a failure after a stale one starts anew")
	a, b := net.Pipe()
	defer b.Close()
	s.results <- result{c: a}
	r := <-got
	require.NoError(t, r.err)
	require.Nil(t, g.Failing())
	require.NoError(t, r.c.Close())
}

func TestCloseEndsAcceptEvenWhileRetrying(t *testing.T) {
	t.Parallel()
	s := newScripted(t)
	g := NewGroup()
	l := New(s, Config{Name: "tunnel", Group: g})
	got := accepted(l)
	<-s.asked
	s.results <- result{err: emfile}
	<-s.asked
	s.results <- result{err: emfile} // now waiting out its backoff
	require.NotNil(t, g.Failing())
	require.NoError(t, l.Close())
	r := <-got
	require.ErrorIs(t, r.err, net.ErrClosed)
	require.Nil(t, g.Failing(), "a closed listener leaves its group")
	_, err := l.Accept()
	require.ErrorIs(t, err, net.ErrClosed)
}

func TestAClosedInnerListenerEndsAccept(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	l := New(ln, Config{Name: "public"})
	got := accepted(l)
	require.NoError(t, ln.Close()) // closed under it, as a server's shutdown may
	require.ErrorIs(t, (<-got).err, net.ErrClosed)
}

func tcpListener(t *testing.T, cfg Config) *Listener {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	l := New(ln, cfg)
	t.Cleanup(func() { _ = l.Close() })
	return l
}

func dial(t *testing.T, l net.Listener) net.Conn {
	c, err := net.Dial("tcp", l.Addr().String())
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// closedByServer reports whether the server closed c (its read ends
// without data), within a generous bound.
func closedByServer(c net.Conn) bool {
	_ = c.SetReadDeadline(time.Now().Add(20 * time.Second))
	_, err := c.Read(make([]byte, 1))
	return errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET)
}

func TestTotalCapClosesTheConnectionsOverIt(t *testing.T) {
	t.Parallel()
	l := tcpListener(t, Config{Name: "public", MaxConns: 2})
	var held []net.Conn
	for range 2 {
		dial(t, l)
		c, err := l.Accept()
		require.NoError(t, err)
		held = append(held, c)
	}
	over := dial(t, l)
	got := accepted(l)
	require.True(t, closedByServer(over), "the connection over the cap is closed")
	require.NoError(t, held[0].Close())
	third := dial(t, l)
	r := <-got
	require.NoError(t, r.err, "a place freed is taken by the next connection")
	require.Equal(t, third.LocalAddr().String(), r.c.RemoteAddr().String())
	require.Equal(t, 2, l.Open())
	require.NoError(t, r.c.Close())
	require.NoError(t, held[1].Close())
	require.Equal(t, 0, l.Open())
}

func TestHandshakeCapsPerAddressAndInTotal(t *testing.T) {
	t.Parallel()
	l := tcpListener(t, Config{Name: "tunnel", MaxPending: 3, MaxPendingPerAddr: 2})
	var pending []net.Conn
	for range 2 {
		dial(t, l)
		c, err := l.Accept()
		require.NoError(t, err)
		pending = append(pending, c)
	}
	over := dial(t, l)
	other := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 2)}}
	c2, err := other.Dial("tcp", l.Addr().String())
	require.NoError(t, err)
	defer c2.Close()
	got := accepted(l)
	require.True(t, closedByServer(over), "the third unfinished handshake from one address is closed")
	r := <-got
	require.NoError(t, r.err, "another address is admitted")
	require.Equal(t, netip.MustParsePrefix("127.0.0.2/32"), r.c.(*Conn).Client())

	// Three pending in all: a fourth from a third address is over the total.
	third := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 3)}}
	c3, err := third.Dial("tcp", l.Addr().String())
	require.NoError(t, err)
	defer c3.Close()
	got = accepted(l)
	require.True(t, closedByServer(c3), "over the total of unfinished handshakes")

	// One established: its place is free, and it stays open.
	Established(pending[0])
	c4 := dial(t, l)
	r = <-got
	require.NoError(t, r.err)
	require.Equal(t, c4.LocalAddr().String(), r.c.RemoteAddr().String())
	require.Equal(t, 4, l.Open(), "an established connection still counts as open")
	for _, c := range append(pending, r.c) {
		require.NoError(t, c.Close())
	}
}

func TestHandshakeDeadlineClosesSilentConnectionsAndIsClearedOnceDone(t *testing.T) {
	t.Parallel()
	ca := pkitest.New(t)
	creds := ca.Creds(t, pkitest.Shard("s1", "n1"))
	const timeout = 300 * time.Millisecond
	l := tcpListener(t, Config{Name: "raft", HandshakeTimeout: timeout, MaxPending: 1})
	tl := TLS(l, creds.Server(pki.ShardMember("s1")))

	// A peer that never speaks: its handshake fails at the deadline and
	// the server closes the connection; its place is then free.
	silent := dial(t, l)
	served := make(chan error, 2)
	serve := func() {
		c, err := tl.Accept()
		if err != nil {
			served <- err
			return
		}
		buf := make([]byte, 5)
		_, err = io.ReadFull(c, buf)
		if err == nil {
			_, err = c.Write(buf)
		}
		_ = c.Close() // before telling: the test's next dial needs its place
		served <- err
	}
	go serve()
	require.True(t, closedByServer(silent), "a connection that never finishes its handshake is closed")
	require.Error(t, <-served)

	// A peer that finishes its handshake keeps its connection past the
	// deadline.
	go serve()
	tc, err := tls.Dial("tcp", l.Addr().String(), creds.Client(pki.ShardMember("s1")))
	require.NoError(t, err)
	defer tc.Close()
	require.NoError(t, tc.Handshake())
	<-time.After(3 * timeout) // the property under test is the deadline's absence
	_, err = tc.Write([]byte("hello"))
	require.NoError(t, err)
	buf := make([]byte, 5)
	_, err = io.ReadFull(tc, buf)
	require.NoError(t, err, "an established connection has no deadline")
	require.Equal(t, "hello", string(buf))
	require.NoError(t, <-served)
}

func TestClientKeyCountsIPv6ByItsSlash64(t *testing.T) {
	t.Parallel()
	key := func(s string) netip.Prefix { return ClientKey(net.TCPAddrFromAddrPort(netip.MustParseAddrPort(s))) }
	require.Equal(t, key("[2001:db8:1:2::1]:1000"), key("[2001:db8:1:2:ffff::9]:2000"))
	require.NotEqual(t, key("[2001:db8:1:2::1]:1000"), key("[2001:db8:1:3::1]:1000"))
	require.Equal(t, netip.MustParsePrefix("10.0.0.1/32"), key("[::ffff:10.0.0.1]:80"), "a mapped IPv4 address is the IPv4 one")
	require.False(t, ClientKey(&net.UnixAddr{Name: "/tmp/s", Net: "unix"}).IsValid())
}

func TestBudgetLeavesRoomForTheRest(t *testing.T) {
	t.Parallel()
	for _, limit := range []int{64, 128, 1024, 4096, 65536, 1 << 20} {
		b := BudgetOf(limit)
		require.Positive(t, b.Public, limit)
		require.GreaterOrEqual(t, b.Pending, 16, limit)
		require.LessOrEqual(t, b.Pending, 1024, limit)
		if limit >= 1024 {
			require.LessOrEqual(t, b.Public+2*b.Pending+b.Reserved, limit, "the shares fit in the limit (%d)", limit)
		}
	}
	require.Equal(t, Budget{Limit: 1024, Public: 640, Pending: 64, Reserved: 256}, BudgetOf(1024))
	require.Positive(t, ProcessBudget().Public)
}

package outbound

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// receiver is a real TLS server on 127.0.0.1 that counts what reaches it.
type receiver struct {
	*httptest.Server
	hits  atomic.Int64
	conns atomic.Int64
}

func newReceiver(t *testing.T, h http.HandlerFunc) *receiver {
	t.Helper()
	r := &receiver{}
	r.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.hits.Add(1)
		h(w, req)
	}))
	r.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			r.conns.Add(1)
		}
	}
	r.StartTLS()
	t.Cleanup(r.Close)
	return r
}

// hangUp ends a handler whose caller has gone without answering it. A
// handler that returned would answer 200, and a client that cancels
// over TLS sends its close_notify before closing: the server can see it,
// end the handler and answer in between, and Go's transport then
// returns that answer rather than the cancel.
func hangUp() { panic(http.ErrAbortHandler) }

func (r *receiver) addrPort() netip.AddrPort {
	return netip.MustParseAddrPort(strings.TrimPrefix(r.URL, "https://"))
}

func (r *receiver) port() string { return fmt.Sprint(r.addrPort().Port()) }

// resolverFunc answers lookups from a function.
type resolverFunc func(host string) []netip.Addr

func (f resolverFunc) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if a := f(host); a != nil {
		return a, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

func newClient(t *testing.T, mod func(*Config), trust ...*receiver) *Client {
	t.Helper()
	pool := x509.NewCertPool()
	for _, r := range trust {
		pool.AddCert(r.Certificate())
	}
	cfg := Config{AllowPrivate: true, RootCAs: pool}
	if mod != nil {
		mod(&cfg)
	}
	c, err := New(cfg)
	require.NoError(t, err)
	t.Cleanup(c.Close)
	return c
}

func requireKind(t *testing.T, err error, kind Kind) *Error {
	t.Helper()
	var oe *Error
	require.True(t, errors.As(err, &oe), "an *outbound.Error: %v", err)
	require.Equal(t, kind, oe.Kind, "%v", err)
	return oe
}

func TestDoSendsAndKeepsTheConnection(t *testing.T) {
	t.Parallel()
	r := newReceiver(t, func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		w.Header().Set("X-Seen", req.Header.Get("Webhook-Id")+" "+req.Method+" "+req.UserAgent())
		_, _ = w.Write(append([]byte("got "), body...))
	})
	c := newClient(t, nil, r)
	for i := range 3 {
		res, err := c.Do(t.Context(), Request{Tenant: "t1", URL: r.URL + "/hook",
			Header: http.Header{"Webhook-Id": {"msg_1"}}, Body: fmt.Appendf(nil, "job %d", i)})
		require.NoError(t, err)
		require.Equal(t, 200, res.Status)
		require.Equal(t, fmt.Sprintf("got job %d", i), string(res.Body))
		require.Equal(t, "msg_1 POST Jobbie", res.Header.Get("X-Seen"))
		require.False(t, res.Truncated)
	}
	require.EqualValues(t, 1, r.conns.Load(), "the three requests shared one kept-alive connection")
}

func TestDoStatusAndBodyCap(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 2000)
	r := newReceiver(t, func(w http.ResponseWriter, req *http.Request) {
		switch req.URL.Path {
		case "/fail":
			w.Header().Set("Retry-After", "7")
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = io.WriteString(w, "overloaded: "+long)
		case "/big":
			_, _ = io.WriteString(w, long)
		}
	})
	c := newClient(t, func(c *Config) { c.MaxBody = 1000 }, r)

	res, err := c.Do(t.Context(), Request{Tenant: "t", URL: r.URL + "/fail"})
	oe := requireKind(t, err, KindStatus)
	require.Equal(t, 503, oe.Status)
	require.Len(t, oe.Body, ErrorBodyBytes, "the error keeps the body's first bytes")
	require.True(t, strings.HasPrefix(err.Error(), "outbound: 127.0.0.1 answered 503 Service Unavailable: overloaded: xxx"), err.Error())
	require.Equal(t, "7", res.Header.Get("Retry-After"), "the answer comes with the error, for Retry-After")

	res, err = c.Do(t.Context(), Request{Tenant: "t", URL: r.URL + "/big"})
	require.NoError(t, err)
	require.Len(t, res.Body, 1000)
	require.True(t, res.Truncated, "it says it truncated")
}

func TestRedirectIsAnAnswerNotFollowed(t *testing.T) {
	t.Parallel()
	target := newReceiver(t, func(http.ResponseWriter, *http.Request) {})
	r := newReceiver(t, func(w http.ResponseWriter, req *http.Request) {
		http.Redirect(w, req, target.URL+"/elsewhere", http.StatusTemporaryRedirect)
	})
	c := newClient(t, nil, r, target)
	res, err := c.Do(t.Context(), Request{Tenant: "t", URL: r.URL})
	oe := requireKind(t, err, KindRedirect)
	require.Equal(t, 307, oe.Status)
	require.Equal(t, target.URL+"/elsewhere", oe.Location)
	require.Equal(t, 307, res.Status)
	require.Zero(t, target.hits.Load(), "the redirect's target was never called")
}

// Without AllowPrivate, every inside target is refused before anything
// is sent, with an error naming the address; the receivers behind the
// loopback ones are never reached.
func TestPrivateTargetsAreRefused(t *testing.T) {
	t.Parallel()
	r := newReceiver(t, func(http.ResponseWriter, *http.Request) {})
	resolver := resolverFunc(func(host string) []netip.Addr {
		switch host {
		case "inside.example.com":
			return []netip.Addr{netip.MustParseAddr("127.0.0.1")}
		case "mixed.example.com":
			return []netip.Addr{netip.MustParseAddr("93.184.216.34"), netip.MustParseAddr("10.1.2.3")}
		}
		return nil
	})
	c := newClient(t, func(c *Config) { c.AllowPrivate = false; c.Resolver = resolver }, r)
	real := newClient(t, func(c *Config) { c.AllowPrivate = false }, r) // the system's resolver, for localhost
	for _, tc := range []struct {
		c    *Client
		url  string
		want string
	}{
		{c, r.URL + "/hook", "refused: 127.0.0.1 is not a public address: loopback"},
		{c, "https://10.0.0.1/hook", "refused: 10.0.0.1 is not a public address: private (RFC 1918)"},
		{c, "https://169.254.169.254/latest/meta-data/", "refused: 169.254.169.254 is not a public address: link-local (cloud metadata lives here)"},
		{c, "https://[::1]:" + r.port() + "/hook", "refused: ::1 is not a public address: loopback"},
		{c, "https://[::ffff:127.0.0.1]:" + r.port() + "/", "refused: ::ffff:127.0.0.1 is not a public address: IPv4-mapped loopback"},
		{c, "https://inside.example.com:" + r.port() + "/hook", "refused: inside.example.com resolves to 127.0.0.1, not a public address: loopback"},
		{c, "https://mixed.example.com/hook", "refused: mixed.example.com resolves to 10.1.2.3, not a public address: private (RFC 1918)"},
		{real, "https://localhost:" + r.port() + "/hook", "refused: localhost resolves to "},
	} {
		_, err := tc.c.Do(t.Context(), Request{Tenant: "t", URL: tc.url})
		oe := requireKind(t, err, KindRefused)
		require.NotEmpty(t, oe.Addr, tc.url)
		require.Contains(t, err.Error(), tc.want, tc.url)
		require.ErrorContains(t, tc.c.Check(t.Context(), tc.url, nil), tc.want, "the configuration-time check refuses it too")
	}
	require.Zero(t, r.hits.Load())
	require.Zero(t, r.conns.Load(), "no connection reached the receiver")

	_, err := c.Do(t.Context(), Request{Tenant: "t", URL: "http://93.184.216.34/"})
	requireKind(t, err, KindRefused)
	require.ErrorIs(t, err, ErrBadURL)
	require.EqualError(t, err, `outbound: URL not allowed: scheme "http": only https is allowed`)
}

// A name that resolves to a public address when the URL is checked and
// to loopback when it is called (DNS rebinding) is refused at the dial.
func TestRebindingIsRefusedAtDialTime(t *testing.T) {
	t.Parallel()
	r := newReceiver(t, func(http.ResponseWriter, *http.Request) {})
	var lookups atomic.Int64
	resolver := resolverFunc(func(host string) []netip.Addr {
		if lookups.Add(1) == 1 {
			return []netip.Addr{netip.MustParseAddr("93.184.216.34")}
		}
		return []netip.Addr{netip.MustParseAddr("127.0.0.1")}
	})
	c := newClient(t, func(c *Config) { c.AllowPrivate = false; c.Resolver = resolver }, r)
	url := "https://rebind.example.com:" + r.port() + "/hook"
	require.NoError(t, c.Check(t.Context(), url, nil), "public when checked")
	_, err := c.Do(t.Context(), Request{Tenant: "t", URL: url})
	oe := requireKind(t, err, KindRefused)
	require.Equal(t, "127.0.0.1", oe.Addr)
	require.Contains(t, err.Error(), "rebind.example.com resolves to 127.0.0.1, not a public address: loopback")
	require.Zero(t, r.conns.Load())
}

// The socket's Control hook refuses an inside address even when the
// resolution step is skipped: the last line holds on its own.
func TestDialControlRefusesTheConnectedAddress(t *testing.T) {
	t.Parallel()
	r := newReceiver(t, func(http.ResponseWriter, *http.Request) {})
	c := newClient(t, func(c *Config) { c.AllowPrivate = false })
	_, err := c.guard.dialer.DialContext(t.Context(), "tcp", r.addrPort().String())
	oe := requireKind(t, err, KindRefused)
	require.Equal(t, "127.0.0.1", oe.Addr)
	require.Zero(t, r.conns.Load())
}

// A public endpoint (a loopback receiver let through as if public) that
// redirects to an inside address gets a redirect error; the inside
// target is never called, and calling its Location is refused.
func TestRedirectToPrivateIsRefused(t *testing.T) {
	t.Parallel()
	r := newReceiver(t, func(w http.ResponseWriter, req *http.Request) {
		http.Redirect(w, req, "https://169.254.169.254/latest/meta-data/", http.StatusFound)
	})
	c := newClient(t, func(c *Config) { c.AllowPrivate = false }, r)
	c.guard.exempt = r.addrPort()
	_, err := c.Do(t.Context(), Request{Tenant: "t", URL: r.URL})
	oe := requireKind(t, err, KindRedirect)
	require.Equal(t, "https://169.254.169.254/latest/meta-data/", oe.Location)
	require.Contains(t, err.Error(), "redirects are not followed")

	_, err = c.Do(t.Context(), Request{Tenant: "t", URL: oe.Location})
	requireKind(t, err, KindRefused)
}

func TestTimeoutAndNetworkErrors(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	r := newReceiver(t, func(w http.ResponseWriter, req *http.Request) {
		if req.URL.Path == "/quick" {
			return
		}
		select {
		case <-release:
		case <-req.Context().Done():
			hangUp()
		}
	})
	defer close(release)
	c := newClient(t, nil, r)
	_, err := c.Do(t.Context(), Request{Tenant: "t", URL: r.URL, Timeout: 100 * time.Millisecond})
	requireKind(t, err, KindTimeout)

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	closed := "https://" + ln.Addr().String()
	require.NoError(t, ln.Close())
	_, err = c.Do(t.Context(), Request{Tenant: "t", URL: closed})
	requireKind(t, err, KindNetwork)

	_, err = c.Do(t.Context(), Request{Tenant: "t", URL: r.URL + "/quick"})
	require.NoError(t, err, "after a failure the client works")
}

func TestTenantOverItsBound(t *testing.T) {
	t.Parallel()
	entered := make(chan struct{}, 8)
	release := make(chan struct{})
	slow := newReceiver(t, func(w http.ResponseWriter, req *http.Request) {
		entered <- struct{}{}
		<-release
	})
	fast := newReceiver(t, func(http.ResponseWriter, *http.Request) {})
	c := newClient(t, func(c *Config) { c.PerTenant = 1; c.FailFast = true }, slow, fast)
	var wg sync.WaitGroup
	wg.Go(func() {
		_, err := c.Do(context.Background(), Request{Tenant: "a", URL: slow.URL})
		assert.NoError(t, err)
	})
	<-entered
	_, err := c.Do(t.Context(), Request{Tenant: "a", URL: fast.URL})
	oe := requireKind(t, err, KindBusy)
	require.Contains(t, oe.Error(), "tenant a has all its outbound requests in flight: 1 in flight")
	_, err = c.Do(t.Context(), Request{Tenant: "b", URL: fast.URL})
	require.NoError(t, err, "another tenant is not held by a's bound")
	close(release)
	wg.Wait()
	_, err = c.Do(t.Context(), Request{Tenant: "a", URL: fast.URL})
	require.NoError(t, err, "a's slot came back")
}

package gateway

import (
	"bytes"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/gateway/limits"
	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/listen"
	"github.com/jobbie/jobbie/internal/pki/pkitest"
	"github.com/jobbie/jobbie/tenancy"
)

// flakyListener fails its next failures accepts with EMFILE, as a process
// out of descriptors does, then accepts again.
type flakyListener struct {
	net.Listener
	failures atomic.Int32
}

var errEMFILE = &net.OpError{Op: "accept", Net: "tcp", Err: os.NewSyscallError("accept4", syscall.EMFILE)}

func (f *flakyListener) Accept() (net.Conn, error) {
	if f.failures.Add(-1) >= 0 {
		return nil, errEMFILE
	}
	return f.Listener.Accept()
}

func newFlaky(t *testing.T, failures int32) *flakyListener {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	f := &flakyListener{Listener: ln}
	f.failures.Store(failures)
	return f
}

// syncBuffer is a log sink tests read while the gateway writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// fasthttp's Serve returns on an accept error like EMFILE, and never
// accepts again; behind the gateway's listener it serves on.
func TestAcceptErrorsAreRetried(t *testing.T) {
	t.Parallel()
	newApp := func() *fiber.App {
		app := fiber.New(fiber.Config{DisableStartupMessage: true})
		app.Get("/", func(c *fiber.Ctx) error { return c.SendStatus(http.StatusNoContent) })
		return app
	}

	bare := newFlaky(t, 1)
	defer bare.Close()
	err := newApp().Listener(bare)
	require.ErrorIs(t, err, syscall.EMFILE, "fasthttp alone stops serving at the first EMFILE")

	logs := &syncBuffer{}
	ln := limits.NewListener(newFlaky(t, 6), 0, listen.Config{Name: "public", Logger: slog.New(slog.NewTextHandler(logs, nil))})
	app := newApp()
	served := make(chan error, 1)
	go func() { served <- app.Listener(ln) }()
	t.Cleanup(func() {
		require.NoError(t, app.Shutdown())
		require.NoError(t, <-served)
	})
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	res, err := (&http.Client{Transport: tr, Timeout: 10 * time.Second}).Get("http://" + ln.Addr().String() + "/")
	require.NoError(t, err)
	require.NoError(t, res.Body.Close())
	require.Equal(t, http.StatusNoContent, res.StatusCode)
	require.Nil(t, ln.Failing(), "a successful accept ends the failure")
	require.Contains(t, logs.String(), "cannot accept connections")
	require.Contains(t, logs.String(), "too many open files")
	require.Contains(t, logs.String(), "accepting connections again")
	require.Equal(t, 1, strings.Count(logs.String(), "cannot accept connections"), "an outage is one line, not one per retry")
}

// Closing the listener ends an Accept that is waiting out errors.
func TestListenerCloseEndsRetries(t *testing.T) {
	t.Parallel()
	ln := limits.NewListener(newFlaky(t, 1<<30), 0, listen.Config{Name: "public", Logger: slog.New(slog.DiscardHandler)})
	accepted := make(chan error, 1)
	go func() {
		_, err := ln.Accept()
		accepted <- err
	}()
	require.Eventually(t, func() bool { return ln.Failing() != nil }, 5*time.Second, time.Millisecond)
	require.NoError(t, ln.Close())
	select {
	case err := <-accepted:
		require.ErrorIs(t, err, net.ErrClosed)
	case <-time.After(5 * time.Second):
		t.Fatal("Accept did not return after Close")
	}
}

// /readyz fails while the gateway cannot accept connections. Its own
// keep-alive connection asks, while accepts fail with EMFILE; a
// connection that comes once they work again ends the failure.
func TestNotReadyWhileAcceptFails(t *testing.T) {
	t.Parallel()
	var flaky *flakyListener
	b := setup(t, func(c *Config) {
		c.listen = func(network, addr string) (net.Listener, error) {
			ln, err := net.Listen(network, addr)
			flaky = &flakyListener{Listener: ln}
			return flaky, err
		}
	})
	require.Equal(t, http.StatusOK, b.do(t, http.MethodGet, "/readyz", "", nil).status)
	flaky.failures.Store(1 << 30)
	dial(t, b.gw.Addr(), 1) // accepted; the accepts after it fail
	require.Eventually(t, func() bool { return b.gw.ln.Failing() != nil }, 5*time.Second, time.Millisecond)
	e := b.do(t, http.MethodGet, "/readyz", "", nil).requireError(t, http.StatusServiceUnavailable, apierr.Unavailable)
	require.Contains(t, e.Message, "too many open files")
	flaky.failures.Store(0)
	dial(t, b.gw.Addr(), 1) // accepted once accepts work again
	require.Eventually(t, func() bool { return b.gw.ln.Failing() == nil }, 5*time.Second, time.Millisecond)
	require.Equal(t, http.StatusOK, b.do(t, http.MethodGet, "/readyz", "", nil).status)
}

var loopback = netip.MustParseAddr("127.0.0.1")

// dial opens n connections that send nothing; cleanup closes them.
func dial(t *testing.T, addr string, n int) []net.Conn {
	t.Helper()
	var out []net.Conn
	for range n {
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		require.NoError(t, err)
		t.Cleanup(func() { c.Close() })
		out = append(out, c)
	}
	return out
}

func TestConnectionsPerAddressLimit(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *Config) { c.MaxConnsPerAddr = 3 })
	idle := dial(t, b.gw.Addr(), 3)
	require.Eventually(t, func() bool { return b.gw.ln.OpenFrom(loopback) == 3 }, 5*time.Second, time.Millisecond)

	// A client that keeps connections alive: the gateway closes this one.
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	fresh := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	get := func() (*http.Response, []byte) {
		res, err := fresh.Get(b.base + "/healthz")
		require.NoError(t, err)
		defer res.Body.Close()
		raw, err := io.ReadAll(res.Body)
		require.NoError(t, err)
		return res, raw
	}
	res, raw := get()
	r := reply{status: res.StatusCode, header: res.Header, body: raw}
	e := r.requireError(t, http.StatusTooManyRequests, apierr.ConnectionLimit)
	require.Contains(t, e.Message, "the limit is 3 per address")
	require.Equal(t, "1", res.Header.Get("Retry-After"))
	require.True(t, res.Close, "the connection over the limit is closed")

	// One over the limit that sends nothing hears why and is closed after
	// a short grace, not after ReadTimeout.
	over := dial(t, b.gw.Addr(), 1)[0]
	require.NoError(t, over.SetReadDeadline(time.Now().Add(10*time.Second)))
	got, err := io.ReadAll(over)
	require.NoError(t, err, "closed by the gateway")
	require.Contains(t, string(got), "HTTP/1.1 429")
	require.Contains(t, string(got), `"code":"connection_limit"`)

	require.NoError(t, idle[0].Close())
	require.Eventually(t, func() bool { return b.gw.ln.OpenFrom(loopback) == 2 }, 5*time.Second, time.Millisecond)
	res, raw = get()
	require.Equal(t, http.StatusOK, res.StatusCode, "body: %s", raw)
}

// A fetch waiting on the shard counts against its key and its tenant; the
// one over either limit is refused before it reaches the shard.
func TestLongPollLimits(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *Config) { c.MaxLongPollsPerKey = 2; c.MaxLongPollsPerTenant = 3 })
	arrived, release := make(chan string, 16), make(chan struct{})
	var once sync.Once
	free := func() { once.Do(func() { close(release) }) }
	t.Cleanup(free) // before the gateway stops, which waits for them
	b.shard.setHandler(func(w http.ResponseWriter, r *http.Request) {
		arrived <- r.URL.Path
		<-release
		w.WriteHeader(http.StatusNoContent)
	})
	worker := func(tid, id string) string {
		return b.signer.Sign(claimsFor(tid, id, tenancy.RoleWorker, "default"))
	}
	w1, w2, other := worker(tenantA, "key_w1"), worker(tenantA, "key_w2"), worker(tenantB, "key_b")
	fetch := map[string]any{"queues": []string{"q"}, "timeout": 30}

	answers := make(chan int, 8)
	park := func(path, key string) {
		go func() {
			req, _ := http.NewRequest(http.MethodPost, b.base+path, strings.NewReader(`{"queues":["q"],"timeout":30}`))
			req.Header.Set("Authorization", "Bearer "+key)
			res, err := b.http.Do(req)
			if err != nil {
				answers <- -1
				return
			}
			res.Body.Close()
			answers <- res.StatusCode
		}()
		select {
		case <-arrived:
		case <-time.After(10 * time.Second):
			t.Fatalf("a fetch under the limits did not reach the shard")
		}
	}
	park("/api/v1/fetch", w1)
	park("/api/v1/fetch/batch", w1)
	e := b.do(t, http.MethodPost, "/api/v1/fetch", w1, fetch).requireError(t, http.StatusTooManyRequests, apierr.KeyLongPollLimit)
	require.Contains(t, e.Message, "key_w1")
	park("/api/v1/fetch", w2)
	r := b.do(t, http.MethodPost, "/api/v1/fetch/batch", w2, fetch)
	r.requireError(t, http.StatusTooManyRequests, apierr.TenantLongPollLimit)
	require.Equal(t, "1", r.header.Get("Retry-After"))
	park("/api/v1/fetch", other) // another tenant is not held back
	key, tenant := b.gw.polls.Waiting(tenantA, "key_w1")
	require.Equal(t, [2]int{2, 3}, [2]int{key, tenant})
	require.Empty(t, arrived, "a refused fetch reached the shard")

	free()
	for range 4 {
		require.Equal(t, http.StatusNoContent, <-answers)
	}
	key, tenant = b.gw.polls.Waiting(tenantA, "key_w1")
	require.Zero(t, key+tenant, "finished fetches give their places back")
	require.Equal(t, http.StatusNoContent, b.do(t, http.MethodPost, "/api/v1/fetch", w1, fetch).status)
}

func TestLimitConfig(t *testing.T) {
	t.Parallel()
	gw := pkitest.New(t).Creds(t, pkitest.Gateway)
	c := Config{ControlURL: "https://127.0.0.1:7070", TLS: gw}.WithDefaults()
	require.Equal(t, 1024, c.MaxConnsPerAddr)
	require.Equal(t, 1000, c.MaxLongPollsPerKey)
	require.Equal(t, 2000, c.MaxLongPollsPerTenant)
	require.Equal(t, time.Minute, c.RevocationMaxAge)

	_, err := New(Config{ControlURL: "https://x", TLS: gw, RevocationInterval: time.Minute, RevocationMaxAge: time.Minute})
	require.ErrorContains(t, err, "RevocationMaxAge")

	lp := limits.NewLongPolls(-1, -1) // negative: no limit
	for range 5000 {
		require.NoError(t, lp.Acquire(tenantA, "k"))
	}
}

func TestOversizedHeadersAre431(t *testing.T) {
	t.Parallel()
	b := setup(t)
	long := strings.Repeat("a", 17<<10)
	key := b.key(t, tenancy.RoleOwner, "*")
	for name, r := range map[string]reply{
		"token":         b.do(t, http.MethodGet, "/api/v1/queues", long, nil),
		"path":          b.do(t, http.MethodGet, "/api/v1/jobs/"+long, key, nil),
		"Last-Event-ID": b.do(t, http.MethodGet, "/api/v1/events", key, nil, "Last-Event-ID", long),
	} {
		t.Run(name, func(t *testing.T) { r.requireError(t, http.StatusRequestHeaderFieldsTooLarge, apierr.HeadersTooLarge) })
	}
	require.Zero(t, b.shard.count())

	// Well over the limit, the client is still sending when the answer is
	// written: the gateway must not reset the connection under it.
	huge := strings.Repeat("a", 256<<10)
	for range 20 {
		b.do(t, http.MethodGet, "/api/v1/queues", key, nil, "X-Pad", huge).
			requireError(t, http.StatusRequestHeaderFieldsTooLarge, apierr.HeadersTooLarge)
	}
}

// GET /api/v1/bulk lists a namespace's bulk operations: proxied with its
// query, for keys that may read jobs.
func TestListBulkOperationsIsProxied(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.shard.setHandler(func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"operations": []any{}})
	})
	r := b.do(t, http.MethodGet, "/api/v1/bulk?limit=5", b.key(t, tenancy.RoleViewer, "default"), nil)
	require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)
	seen := b.shard.last(t)
	require.Equal(t, http.MethodGet, seen.Method)
	require.Equal(t, "/api/v1/bulk?limit=5", seen.URI)
	b.do(t, http.MethodGet, "/api/v1/bulk", b.key(t, tenancy.RoleBilling, "default"), nil).
		requireError(t, http.StatusForbidden, apierr.Forbidden)
}

func TestCreateKeyRefusesUnknownField(t *testing.T) {
	t.Parallel()
	b := setup(t)
	r := b.do(t, http.MethodPost, "/api/v1/keys", b.key(t, tenancy.RoleOwner, "*"), []byte(`{"name":"ci","role":"producer","scope":"all"}`))
	e := r.requireError(t, http.StatusBadRequest, apierr.BadRequest)
	require.Equal(t, "scope", e.Field)
	require.Empty(t, b.control.TenantKeys(tenantA), "nothing was created")
}

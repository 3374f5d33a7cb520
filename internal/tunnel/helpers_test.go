package tunnel

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/pki"
)

// waitFor bounds every wait on a signal: generous for a loaded 2-core box.
const waitFor = 30 * time.Second

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// hosted is a registry serving on a loopback port.
type hosted struct {
	*Registry
	addr string
	done chan error
}

// startRegistry serves a registry with creds on addr ("127.0.0.1:0" for
// a free port); it is closed when the test ends.
func startRegistry(t testing.TB, creds *pki.Credentials, addr string, opts ...func(*RegistryConfig)) *hosted {
	t.Helper()
	cfg := RegistryConfig{TLS: creds, Logger: quiet}
	for _, o := range opts {
		o(&cfg)
	}
	reg, err := NewRegistry(cfg)
	require.NoError(t, err)
	ln, err := net.Listen("tcp", addr)
	require.NoError(t, err)
	h := &hosted{Registry: reg, addr: ln.Addr().String(), done: make(chan error, 1)}
	go func() { h.done <- reg.Serve(ln) }()
	t.Cleanup(h.stop)
	return h
}

// stop closes the registry and waits for its Serve to return.
func (h *hosted) stop() {
	_ = h.Close()
	if err := <-h.done; err != nil {
		h.done <- err // stop may run twice (a test, then its cleanup)
	}
}

// startAgent runs an agent for creds against addr until the test ends.
func startAgent(t testing.TB, creds *pki.Credentials, addr string, h http.Handler, opts ...func(*AgentConfig)) (*Agent, context.CancelFunc) {
	t.Helper()
	cfg := AgentConfig{Addr: addr, TLS: creds, Handler: h, MinBackoff: 20 * time.Millisecond,
		MaxBackoff: 200 * time.Millisecond, Logger: quiet}
	for _, o := range opts {
		o(&cfg)
	}
	a, err := NewAgent(cfg)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = a.Run(ctx); close(done) }()
	stop := func() { cancel(); <-done }
	t.Cleanup(stop)
	return a, stop
}

// waitAgent waits until the agent's state satisfies ok.
func waitAgent(t testing.TB, a *Agent, what string, ok func(AgentState) bool) AgentState {
	t.Helper()
	deadline := time.NewTimer(waitFor)
	defer deadline.Stop()
	for {
		ch := a.Changed()
		st := a.State()
		if ok(st) {
			return st
		}
		select {
		case <-ch:
		case <-deadline.C:
			t.Fatalf("agent never %s; state %+v", what, st)
		}
	}
}

func connected(st AgentState) bool { return st.Connected }

// waitRegistry waits until ok holds for the registry.
func waitRegistry(t testing.TB, r *Registry, what string, ok func() bool) {
	t.Helper()
	deadline := time.NewTimer(waitFor)
	defer deadline.Stop()
	for {
		ch := r.Changed()
		if ok() {
			return
		}
		select {
		case <-ch:
		case <-deadline.C:
			t.Fatalf("registry never %s; sessions %+v", what, r.Sessions())
		}
	}
}

// nodeClient is an HTTP client that reaches one node through r.
func nodeClient(t testing.TB, r *Registry, shard, node string) *http.Client {
	t.Helper()
	tr := &http.Transport{DialContext: r.NodeDialer(shard, node), MaxIdleConnsPerHost: 128, DisableCompression: true}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: waitFor}
}

// get fetches url and returns the status and body.
func get(t testing.TB, c *http.Client, url string) (int, string) {
	t.Helper()
	resp, err := c.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b)
}

// whoami answers with the identity of the peer that sent the request.
var whoami = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	id, ok := pki.PeerIdentity(r.TLS)
	if !ok {
		http.Error(w, "no peer", http.StatusUnauthorized)
		return
	}
	_, _ = io.WriteString(w, id.String())
})

// answer is a handler that says s.
func answer(s string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, s) })
}

// refusedByServer dials the registry with cfg, whose handshake the
// client side completes, and returns what the server said on the first
// read: with TLS 1.3 a refused client certificate shows there.
func refusedByServer(t testing.TB, addr string, cfg *pki.Credentials, trustAny bool) error {
	t.Helper()
	tc := cfg.Client(nil)
	if trustAny {
		tc.VerifyConnection = nil // a certificate from another CA: do not check the server either
	}
	d := &net.Dialer{Timeout: waitFor}
	c, err := d.Dial("tcp", addr)
	require.NoError(t, err)
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(waitFor))
	conn := tls.Client(c, tc)
	if err := conn.Handshake(); err != nil {
		return err
	}
	_, err = conn.Read(make([]byte, 1))
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("the server neither admitted nor refused the connection")
	}
	return err
}

package tunnel

import (
	"bytes"
	"crypto/sha256"
	"crypto/x509"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/stretchr/testify/require"
	"github.com/valyala/fasthttp"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/pki"
	"github.com/jobbie/jobbie/internal/pki/pkitest"
)

// A request through the tunnel reaches the agent's handler, which sees
// the hosted gateway as its TLS peer; the registry knows the node by the
// shard and node its certificate names.
func TestRequestReachesAgentHandler(t *testing.T) {
	t.Parallel()
	ca := pkitest.New(t)
	h := startRegistry(t, ca.Creds(t, pkitest.Gateway), "127.0.0.1:0")
	a, _ := startAgent(t, ca.Creds(t, pkitest.Shard("s1", "n1")), h.addr, whoami)
	st := waitAgent(t, a, "connected", connected)
	require.Zero(t, st.Reconnects)
	waitRegistry(t, h.Registry, "registered s1/n1", func() bool { return h.Connected("s1", "n1") })

	status, body := get(t, nodeClient(t, h.Registry, "s1", "n1"), "http://node/whoami")
	require.Equal(t, http.StatusOK, status)
	require.Equal(t, "jobbie://gateway/-/g1", body)

	sessions := h.Sessions()
	require.Len(t, sessions, 1)
	require.Equal(t, pkitest.Shard("s1", "n1"), sessions[0].Node)
	require.Equal(t, "tunnel:tunnel://s1/n1", a.Listener().Addr().Network()+":"+a.Listener().Addr().String())
}

// A node whose certificate names its owner (a self-hosted shard) is
// dialed by shard and node like any other; its session shows the owner.
func TestTenantOwnedNodeIsDialable(t *testing.T) {
	t.Parallel()
	ca := pkitest.New(t)
	h := startRegistry(t, ca.Creds(t, pkitest.Gateway), "127.0.0.1:0")
	owned := pkitest.TenantShard("s9", "n1", pkitest.Tenant)
	a, _ := startAgent(t, ca.Creds(t, owned), h.addr, whoami)
	waitAgent(t, a, "connected", connected)
	waitRegistry(t, h.Registry, "registered s9/n1", func() bool { return h.Connected("s9", "n1") })

	status, body := get(t, nodeClient(t, h.Registry, "s9", "n1"), "http://node/whoami")
	require.Equal(t, http.StatusOK, status)
	require.Equal(t, "jobbie://gateway/-/g1", body)
	sessions := h.Sessions()
	require.Len(t, sessions, 1)
	require.Equal(t, owned, sessions[0].Node)
}

// The shard's own kind of server, a fiber app with pki.Require, serves
// the agent's Listener; a fasthttp.HostClient reaches it with the
// registry's Dial and a tunnel address, as shardclient's pools would.
func TestFiberServesTunnelListener(t *testing.T) {
	t.Parallel()
	ca := pkitest.New(t)
	h := startRegistry(t, ca.Creds(t, pkitest.Gateway), "127.0.0.1:0")
	a, _ := startAgent(t, ca.Creds(t, pkitest.Shard("s1", "n1")), h.addr, nil)

	app := fiber.New(fiber.Config{DisableStartupMessage: true, ErrorHandler: apierr.Handler})
	app.Get("/internal", pki.Require(pki.Roles(pki.RoleGateway), nil), func(c *fiber.Ctx) error {
		return c.SendString("hello " + pki.RequiredPeer(c).String())
	})
	app.Get("/operators", pki.Require(pki.Roles(pki.RoleOperator), nil), func(c *fiber.Ctx) error { return c.SendString("no") })
	served := make(chan struct{})
	go func() { _ = app.Listener(a.Listener()); close(served) }()
	t.Cleanup(func() { _ = app.Shutdown(); <-served })
	waitAgent(t, a, "connected", connected)
	waitRegistry(t, h.Registry, "registered s1/n1", func() bool { return h.Connected("s1", "n1") })

	hc := &fasthttp.HostClient{Addr: Addr("s1", "n1"), Dial: h.Dial, MaxIdemponentCallAttempts: 1}
	t.Cleanup(hc.CloseIdleConnections)
	call := func(path string) (int, string) {
		req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
		defer fasthttp.ReleaseRequest(req)
		defer fasthttp.ReleaseResponse(resp)
		req.SetRequestURI("http://node" + path)
		require.NoError(t, hc.DoTimeout(req, resp, waitFor))
		return resp.StatusCode(), string(resp.Body())
	}
	status, body := call("/internal")
	require.Equal(t, fiber.StatusOK, status)
	require.Equal(t, "hello jobbie://gateway/-/g1", body)
	status, _ = call("/operators")
	require.Equal(t, fiber.StatusForbidden, status, "the route's role check applies to tunnelled requests")

	// A server shutdown closes the listener, and that ends the agent.
	require.NoError(t, app.Shutdown())
	waitAgent(t, a, "stopped", func(st AgentState) bool { return !st.Connected })
}

// 100 requests in parallel pass while a long-poll is held for 2 s on the
// same tunnel.
func TestConcurrentRequestsPassALongPoll(t *testing.T) {
	t.Parallel()
	ca := pkitest.New(t)
	h := startRegistry(t, ca.Creds(t, pkitest.Gateway), "127.0.0.1:0")
	held, release := make(chan struct{}), make(chan struct{})
	mux := http.NewServeMux()
	mux.HandleFunc("/poll", func(w http.ResponseWriter, r *http.Request) {
		close(held)
		select {
		case <-release:
			_, _ = io.WriteString(w, "job")
		case <-r.Context().Done():
		}
	})
	mux.HandleFunc("/echo", func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, r.URL.Query().Get("i"))
	})
	a, _ := startAgent(t, ca.Creds(t, pkitest.Shard("s1", "n1")), h.addr, mux)
	waitAgent(t, a, "connected", connected)
	waitRegistry(t, h.Registry, "registered s1/n1", func() bool { return h.Connected("s1", "n1") })
	c := nodeClient(t, h.Registry, "s1", "n1")

	start := time.Now()
	polled := make(chan string, 1)
	go func() {
		resp, err := c.Get("http://node/poll")
		if err != nil {
			polled <- err.Error()
			return
		}
		b, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		polled <- string(b)
	}()
	<-held

	var wg sync.WaitGroup
	errs := make(chan error, 100)
	for i := range 100 {
		wg.Go(func() {
			resp, err := c.Get(fmt.Sprintf("http://node/echo?i=%d", i))
			if err != nil {
				errs <- err
				return
			}
			defer resp.Body.Close()
			b, err := io.ReadAll(resp.Body)
			if err == nil && string(b) != fmt.Sprint(i) {
				err = fmt.Errorf("request %d got %q", i, b)
			}
			if err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	select {
	case got := <-polled:
		t.Fatalf("the long-poll returned before it was released: %q", got)
	default:
	}
	// The long-poll is held for 2 s in all, as a fetch waits for a job.
	<-time.After(time.Until(start.Add(2 * time.Second)))
	close(release)
	require.Equal(t, "job", <-polled)
	require.GreaterOrEqual(t, time.Since(start), 2*time.Second)
}

// Large bodies stream both ways: 16 MiB up, 16 MiB down, each hashed at
// the far end.
func TestLargeBodiesStream(t *testing.T) {
	t.Parallel()
	const size = 16 << 20
	ca := pkitest.New(t)
	h := startRegistry(t, ca.Creds(t, pkitest.Gateway), "127.0.0.1:0")
	a, _ := startAgent(t, ca.Creds(t, pkitest.Shard("s1", "n1")), h.addr, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sum := sha256.New()
		n, err := io.Copy(sum, r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.Header().Set("X-Up", fmt.Sprintf("%d %x", n, sum.Sum(nil)))
		_, _ = io.Copy(w, io.LimitReader(newSource(2), size))
	}))
	waitAgent(t, a, "connected", connected)
	waitRegistry(t, h.Registry, "registered s1/n1", func() bool { return h.Connected("s1", "n1") })

	upSum := sha256.New()
	_, _ = io.Copy(upSum, io.LimitReader(newSource(1), size))
	downSum := sha256.New()
	_, _ = io.Copy(downSum, io.LimitReader(newSource(2), size))

	pr, pw := io.Pipe()
	go func() { _, err := io.Copy(pw, io.LimitReader(newSource(1), size)); pw.CloseWithError(err) }()
	resp, err := nodeClient(t, h.Registry, "s1", "n1").Post("http://node/upload", "application/octet-stream", pr)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, fmt.Sprintf("%d %x", size, upSum.Sum(nil)), resp.Header.Get("X-Up"))
	got := sha256.New()
	n, err := io.Copy(got, resp.Body)
	require.NoError(t, err)
	require.EqualValues(t, size, n)
	require.True(t, bytes.Equal(downSum.Sum(nil), got.Sum(nil)), "the download arrived intact")
}

// source is an endless deterministic byte stream.
type source struct{ r *rand.ChaCha8 }

func newSource(seed byte) *source {
	var s [32]byte
	s[0] = seed
	return &source{rand.NewChaCha8(s)}
}

func (s *source) Read(b []byte) (int, error) { return s.r.Read(b) }

// With ClientCAs, agents must come from those CAs alone (self-hosted
// shards' own CA): a node of that CA is admitted, a node of the hosted
// process's own CA is refused, whatever it names.
func TestClientCAsAreTheOnlyAgentTrust(t *testing.T) {
	t.Parallel()
	hosted := pkitest.New(t)
	own, err := pki.NewCA("self-hosted shards")
	require.NoError(t, err)
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(own.CertPEM())
	h := startRegistry(t, hosted.Creds(t, pkitest.Gateway), "127.0.0.1:0", func(c *RegistryConfig) { c.ClientCAs = pool })

	id := pkitest.TenantShard("s9", "n1", pkitest.Tenant)
	certPEM, keyPEM, err := own.Issue(id, nil, time.Hour)
	require.NoError(t, err)
	// The node trusts its own CA (its peers) and the hosted one (the gateway).
	creds, err := pki.NewCredentials(certPEM, keyPEM, append(append([]byte{}, own.CertPEM()...), hosted.CertPEM()...))
	require.NoError(t, err)
	a, _ := startAgent(t, creds, h.addr, whoami)
	waitAgent(t, a, "connected", connected)
	// The agent is connected once its handshake is done; the gateway holds
	// the session a moment later.
	waitRegistry(t, h.Registry, "registered s9/n1", func() bool { return h.Connected("s9", "n1") })
	status, body := get(t, nodeClient(t, h.Registry, "s9", "n1"), "http://node/whoami")
	require.Equal(t, http.StatusOK, status)
	require.Equal(t, "jobbie://gateway/-/g1", body)

	require.Error(t, refusedByServer(t, h.addr, hosted.Creds(t, pkitest.TenantShard("s9", "n2", pkitest.Tenant)), false))
	require.False(t, h.Connected("s9", "n2"))
}

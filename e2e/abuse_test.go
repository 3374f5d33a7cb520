package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jobbie/jobbie/e2e/internal/devproc"
	"github.com/jobbie/jobbie/e2e/internal/freeport"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/tenancy"
)

// A gateway that ran out of file descriptors serves again once they are
// free: accept errors are retried, and /readyz says it cannot serve
// meanwhile. The gateway runs under a descriptor limit of 128, so a few
// hundred idle connections exhaust it.
func TestGatewayServesAgainAfterDescriptorsRunOut(t *testing.T) {
	t.Parallel()
	_, ct := shared.tenant(t)
	gw := startGateway(t, shared.control, 128, "--max-conns", "-1") // no total cap, so the flood spends every descriptor

	// One keep-alive connection, opened before the flood, to ask /readyz.
	probe := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{MaxConnsPerHost: 1}}
	t.Cleanup(probe.CloseIdleConnections)
	require.Equal(t, 200, getVia(t, probe, gw.url+"/readyz").Status)

	conns := dialIdle(t, gw.addr, 300)
	var seen reply
	exhausted := holdsWithin(10*time.Second, func() bool {
		seen = getVia(t, probe, gw.url+"/readyz")
		return seen.Status == 503
	})
	if assert.True(t, exhausted, "/readyz should fail while descriptors are exhausted; last answer %d %s", seen.Status, seen.Raw) {
		assert.Equal(t, "unavailable", seen.code())
		assert.Contains(t, string(seen.Raw), "too many open files")
	}
	for _, c := range conns {
		c.Close()
	}

	fresh := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	eventually(t, 15*time.Second, func() bool {
		r, err := fresh.Get(gw.url + "/healthz")
		if err != nil {
			return false
		}
		r.Body.Close()
		return r.StatusCode == 200
	}, "the gateway accepts connections again once descriptors are free")
	eventually(t, 10*time.Second, func() bool { return getVia(t, fresh, gw.url+"/readyz").Status == 200 }, "/readyz is 200 again")
	r := call(t, "POST", gw.url+"/api/v1/enqueue", ct.OwnerKey, map[string]any{"queue": "after-emfile"})
	require.Equal(t, 201, r.Status, string(r.Raw))
	require.Contains(t, gw.logText(), "cannot accept connections")
}

// Connections from one address beyond the limit get 429 naming the limit,
// and are served again once the address closes some.
func TestGatewayLimitsConnectionsPerAddress(t *testing.T) {
	t.Parallel()
	gw := startGateway(t, shared.control, 0, "--max-conns-per-addr", "10")
	idle := dialIdle(t, gw.addr, 10)

	fresh := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	r := getVia(t, fresh, gw.url+"/healthz")
	require.Equal(t, 429, r.Status, string(r.Raw))
	require.Equal(t, "connection_limit", r.code())
	require.Equal(t, "1", r.Header.Get("Retry-After"))
	require.Contains(t, string(r.Raw), "10")

	idle[0].Close()
	eventually(t, 10*time.Second, func() bool { return getVia(t, fresh, gw.url+"/healthz").Status == 200 },
		"a connection is served once the address is under its limit again")
	for _, c := range idle[1:] {
		c.Close()
	}
}

// Concurrent long-polls are limited per key and per tenant: the one over
// either limit gets 429 naming it, other tenants are untouched, and a
// finished long-poll frees its place.
func TestGatewayLimitsLongPollsPerKeyAndTenant(t *testing.T) {
	t.Parallel()
	owner, ct := shared.tenant(t)
	_, other := shared.tenant(t)
	wk, err := owner.CreateKey(ctx(t), clientKey("workers", tenancy.RoleWorker, "default"))
	require.NoError(t, err)
	gw := startGateway(t, shared.control, 0, "--max-long-polls-per-key", "2", "--max-long-polls-per-tenant", "3")

	parked := make(chan reply, 3)
	poll := func(key string, timeout float64) (reply, error) {
		return postRaw(gw.url+"/api/v1/fetch", key, map[string]any{"queues": []string{"lp"}, "worker_id": "w", "timeout": timeout})
	}
	park := func(key string) {
		go func() {
			r, err := poll(key, 30)
			if err != nil {
				r = reply{Status: -1, Raw: []byte(err.Error())}
			}
			parked <- r
		}()
	}
	longPolls := func() float64 { return scrapeMetric(t, gw.metrics, "jobbie_gateway_long_polls") }

	park(ct.OwnerKey)
	park(ct.OwnerKey)
	eventually(t, 10*time.Second, func() bool { return longPolls() == 2 }, "two long-polls parked")
	r, err := poll(ct.OwnerKey, 0)
	require.NoError(t, err)
	require.Equal(t, 429, r.Status, string(r.Raw))
	require.Equal(t, "key_long_poll_limit", r.code())
	require.Equal(t, "1", r.Header.Get("Retry-After"))

	park(wk.Token)
	eventually(t, 10*time.Second, func() bool { return longPolls() == 3 }, "three long-polls parked")
	r, err = poll(wk.Token, 0)
	require.NoError(t, err)
	require.Equal(t, 429, r.Status, string(r.Raw))
	require.Equal(t, "tenant_long_poll_limit", r.code())

	r, err = poll(other.OwnerKey, 0)
	require.NoError(t, err)
	require.Equal(t, 204, r.Status, "another tenant is not limited: %s", r.Raw)

	// Three jobs answer the three parked polls, which frees their places.
	for i := range 3 {
		_, err := owner.Enqueue(ctx(t), client.EnqueueRequest{Queue: "lp", Payload: i})
		require.NoError(t, err)
	}
	for range 3 {
		select {
		case r := <-parked:
			require.Equal(t, 200, r.Status, string(r.Raw))
		case <-time.After(20 * time.Second):
			t.Fatal("a parked long-poll did not get its job")
		}
	}
	eventually(t, 10*time.Second, func() bool { return longPolls() == 0 }, "finished long-polls free their places")
	r, err = poll(ct.OwnerKey, 0)
	require.NoError(t, err)
	require.Equal(t, 204, r.Status, string(r.Raw))
}

// Request headers over 16 KiB get 431 in the JSON error shape, whichever
// header is long.
func TestGatewayOversizedHeadersAre431(t *testing.T) {
	t.Parallel()
	_, ct := shared.tenant(t)
	long := strings.Repeat("a", 17<<10)
	cases := []struct {
		name, method, path, key string
		header                  []string
	}{
		{"long token", "GET", "/api/v1/queues", long, nil},
		{"long path", "GET", "/api/v1/jobs/" + long, ct.OwnerKey, nil},
		{"long Last-Event-ID", "GET", "/api/v1/events", ct.OwnerKey, []string{"Last-Event-ID", long}},
	}
	for _, tc := range cases {
		r := call(t, tc.method, shared.gateway+tc.path, tc.key, nil, tc.header...)
		require.Equal(t, 431, r.Status, "%s: %.200s", tc.name, r.Raw)
		require.Equal(t, "headers_too_large", r.code(), tc.name)
		require.NotEmpty(t, r.Body["error"].(map[string]any)["request_id"], tc.name)
	}
	// The gateway still serves after them.
	require.Equal(t, 200, call(t, "GET", shared.gateway+"/api/v1/queues", ct.OwnerKey, nil).Status)
}

// A gateway that cannot reach control refuses keys once its revocation
// list is older than its bound (503 naming why), instead of honouring a
// key revoked meanwhile; it serves again once control answers.
func TestGatewayRefusesKeysOnStaleRevocations(t *testing.T) {
	t.Parallel()
	owner, ct := shared.tenant(t)
	made, err := owner.CreateKey(ctx(t), clientKey("soon-revoked", tenancy.RoleProducer, "default"))
	require.NoError(t, err)
	px := newCutProxy(t, hostPort(shared.control))
	gw := startGateway(t, "https://"+px.addr, 0, "--revocation-max-age", "3s")
	enqueue := func(key string) reply {
		return call(t, "POST", gw.url+"/api/v1/enqueue", key, map[string]any{"queue": "revocations"})
	}
	require.Equal(t, 201, enqueue(made.Token).Status)

	px.cut() // this gateway no longer reaches control; the others do
	require.NoError(t, owner.DeleteKey(ctx(t), made.ID))
	var r reply
	stale := holdsWithin(20*time.Second, func() bool { r = enqueue(made.Token); return r.Status != 201 })
	require.True(t, stale, "a key revoked while control is unreachable still works after 20 s")
	require.Equal(t, 503, r.Status, string(r.Raw))
	require.Equal(t, "revocations_stale", r.code())
	require.NotEmpty(t, r.Header.Get("Retry-After"))
	r = enqueue(ct.OwnerKey)
	require.Equal(t, 503, r.Status, "every key is refused, not only the revoked one: %s", r.Raw)
	require.Equal(t, "revocations_stale", r.code())
	require.Equal(t, 503, call(t, "GET", gw.url+"/readyz", "", nil).Status)
	require.GreaterOrEqual(t, scrapeMetric(t, gw.metrics, "jobbie_gateway_revocation_list_age_seconds"), 3.0)
	require.Contains(t, gw.logText(), "revocation list")

	px.restore()
	eventually(t, 15*time.Second, func() bool { return enqueue(ct.OwnerKey).Status == 201 }, "keys are honoured once the list is fresh")
	r = enqueue(made.Token)
	require.Equal(t, 401, r.Status, string(r.Raw))
	require.Contains(t, string(r.Raw), "revoked")
	require.Equal(t, 200, call(t, "GET", gw.url+"/readyz", "", nil).Status)
}

// Key and namespace creation refuse a field they do not know (400 naming
// it) and create nothing.
func TestAdminBodiesRefuseUnknownFields(t *testing.T) {
	t.Parallel()
	owner, ct := shared.tenant(t)
	r := call(t, "POST", shared.gateway+"/api/v1/keys", ct.OwnerKey, `{"name":"strict","role":"producer","scope":"all"}`)
	require.Equal(t, 400, r.Status, string(r.Raw))
	require.Equal(t, "scope", r.field())
	require.Contains(t, string(r.Raw), `unknown field`)
	r = call(t, "POST", shared.gateway+"/api/v1/namespaces", ct.OwnerKey, `{"name":"strict","region":"eu"}`)
	require.Equal(t, 400, r.Status, string(r.Raw))
	require.Equal(t, "region", r.field())

	keys, err := owner.ListKeys(ctx(t))
	require.NoError(t, err)
	for _, k := range keys {
		require.NotEqual(t, "strict", k.Name, "a refused key was created")
	}
	nss, err := owner.ListNamespaces(ctx(t))
	require.NoError(t, err)
	for _, ns := range nss {
		require.NotEqual(t, "strict", ns.Name, "a refused namespace was created")
	}
}

// gatewayProc is a `jobbie gateway` process of one test.
type gatewayProc struct {
	url, addr, logPath string
	metrics            string // its --metrics-addr, https://
	pid                int    // the gateway's, or the shell's that execs it
}

// sharedPKI is the CA of the shared server's data directory, to issue
// certificates the shared server trusts.
func sharedPKI() *testPKI { return &testPKI{dir: filepath.Join(shared.dir, "pki")} }

var gatewaySeq atomic.Int64

// startGateway runs `jobbie gateway` against controlURL, on a gateway
// certificate of the shared server's CA, until the test ends; nofile > 0
// runs it under that descriptor limit (soft and hard, so Go cannot raise
// it).
func startGateway(t *testing.T, controlURL string, nofile int, flags ...string) *gatewayProc {
	t.Helper()
	dir := t.TempDir()
	ports, err := freeport.Loopback(3)
	require.NoError(t, err)
	keyFile := filepath.Join(dir, "gossip.key")
	writeGossipKey(t, keyFile)
	certFlags := sharedPKI().issue(t, "gateway", "", fmt.Sprintf("gw-%d", gatewaySeq.Add(1)))
	args := append(append([]string{"gateway", "--http", ports[0], "--control", controlURL, "--gossip", ports[1],
		"--metrics-addr", ports[2], "--gossip-key-file", keyFile}, certFlags...), flags...)
	cmd := exec.Command(binary, args...)
	if nofile > 0 {
		cmd = exec.Command("sh", append([]string{"-c", fmt.Sprintf(`ulimit -n %d && exec "$0" "$@"`, nofile), binary}, args...)...)
	}
	gw := &gatewayProc{url: "http://" + ports[0], addr: ports[0], metrics: "https://" + ports[2], logPath: filepath.Join(dir, "gateway.log")}
	p, err := devproc.Start(cmd, gw.logPath, "jobbie gateway: ready")
	require.NoError(t, err)
	gw.pid = cmd.Process.Pid
	t.Cleanup(func() {
		// Parked long-polls would hold a graceful stop for their whole wait.
		p.Kill()
		if t.Failed() {
			dumpLogs(t, gw.logPath)
		}
	})
	if err := p.WaitReady(30 * time.Second); err != nil {
		t.Fatal(err)
	}
	return gw
}

func (g *gatewayProc) logText() string {
	b, _ := os.ReadFile(g.logPath)
	return string(b)
}

// dialIdle opens n TCP connections that send nothing; the test's cleanup
// closes any left open.
func dialIdle(t *testing.T, addr string, n int) []net.Conn {
	t.Helper()
	conns := make([]net.Conn, 0, n)
	t.Cleanup(func() {
		for _, c := range conns {
			c.Close()
		}
	})
	for range n {
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		require.NoError(t, err)
		conns = append(conns, c)
	}
	return conns
}

// getVia is a GET through hc; a transport failure is status 0.
func getVia(t *testing.T, hc *http.Client, url string) reply {
	t.Helper()
	res, err := hc.Get(url)
	if err != nil {
		return reply{Raw: []byte(err.Error())}
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	out := reply{Status: res.StatusCode, Header: res.Header, Raw: raw}
	_ = json.Unmarshal(raw, &out.Body)
	return out
}

// postRaw sends a JSON POST; it may run off the test's goroutine.
func postRaw(url, key string, body any) (reply, error) {
	raw, err := json.Marshal(body)
	if err != nil {
		return reply{}, err
	}
	req, err := http.NewRequest("POST", url, bytes.NewReader(raw))
	if err != nil {
		return reply{}, err
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	res, err := (&http.Client{Timeout: 90 * time.Second}).Do(req)
	if err != nil {
		return reply{}, err
	}
	defer res.Body.Close()
	out := reply{Status: res.StatusCode, Header: res.Header}
	if out.Raw, err = io.ReadAll(res.Body); err != nil {
		return out, err
	}
	_ = json.Unmarshal(out.Raw, &out.Body)
	return out, nil
}

// scrapeMetric reads one unlabelled sample from a process's /metrics (a
// gateway's metrics address) with the shared server's operator
// certificate; -1 when it is absent.
func scrapeMetric(t *testing.T, base, name string) float64 {
	t.Helper()
	r := callVia(t, shared.ops, "GET", base+"/metrics", "", nil)
	require.Equal(t, 200, r.Status)
	sc := bufio.NewScanner(bytes.NewReader(r.Raw))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), name+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			require.NoError(t, err)
			return f
		}
	}
	return -1
}

// holdsWithin polls cond until it holds or d passes, and says which.
func holdsWithin(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(50 * time.Millisecond)
	}
	return true
}

// cutProxy relays TCP to a target until cut, after which it closes every
// connection it has and every new one at once (a control plane gone from
// this gateway's view), until restored.
type cutProxy struct {
	addr   string
	ln     net.Listener
	down   atomic.Bool
	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	target string
}

func newCutProxy(t *testing.T, target string) *cutProxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p := &cutProxy{addr: ln.Addr().String(), ln: ln, target: target, conns: map[net.Conn]struct{}{}}
	done := make(chan struct{})
	go func() { defer close(done); p.serve() }()
	t.Cleanup(func() { ln.Close(); p.closeAll(); <-done })
	return p
}

func (p *cutProxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		if p.down.Load() {
			c.Close()
			continue
		}
		up, err := net.DialTimeout("tcp", p.target, 5*time.Second)
		if err != nil {
			c.Close()
			continue
		}
		p.track(c, up)
		go func() { _, _ = io.Copy(up, c); up.Close() }()
		go func() { _, _ = io.Copy(c, up); c.Close() }()
	}
}

func (p *cutProxy) track(cs ...net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range cs {
		p.conns[c] = struct{}{}
	}
}

func (p *cutProxy) closeAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		c.Close()
	}
	clear(p.conns)
}

func (p *cutProxy) cut()     { p.down.Store(true); p.closeAll() }
func (p *cutProxy) restore() { p.down.Store(false) }

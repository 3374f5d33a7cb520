package e2e

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/e2e/internal/devproc"
	"github.com/jobbie/jobbie/e2e/internal/freeport"
)

// limitedDev is a `jobbie dev` run under a descriptor limit, with a
// tunnel listener and a metrics port, and the Raft addresses of its
// shard and control.
type limitedDev struct {
	gateway, control, shard, metrics, tunnel string // host:port
	shardRaft, controlRaft                   string
	ownerKey                                 string
	ops                                      *http.Client // operator certificate, fresh connection per request
	pid                                      int
}

// startLimitedDev starts `jobbie dev` with `ulimit -n nofile` (soft and
// hard, so Go cannot raise it) and flags.
func startLimitedDev(t *testing.T, nofile int, flags ...string) *limitedDev {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "dev")
	ports, err := freeport.Loopback(5)
	require.NoError(t, err)
	args := append([]string{"dev", "--data-dir", dir, "--addr", ports[0], "--control-addr", ports[1], "--shard-addr", ports[2],
		"--metrics-addr", ports[3], "--tunnel-addr", ports[4]}, flags...)
	cmd := exec.Command("sh", append([]string{"-c", fmt.Sprintf(`ulimit -n %d && exec "$0" "$@"`, nofile), binary}, args...)...)
	logPath := dir + ".log"
	p, err := devproc.Start(cmd, logPath, "Jobbie is running")
	require.NoError(t, err)
	t.Cleanup(func() {
		p.Kill()
		if t.Failed() {
			dumpLogs(t, logPath)
		}
	})
	require.NoError(t, p.WaitReady(60*time.Second))
	d := &limitedDev{gateway: ports[0], control: ports[1], shard: ports[2], metrics: ports[3], tunnel: ports[4], pid: cmd.Process.Pid}
	d.ownerKey, err = devproc.ReadKey(filepath.Join(dir, "owner.key"))
	require.NoError(t, err)
	cfg, err := devproc.OperatorTLS(dir)
	require.NoError(t, err)
	d.ops = &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: cfg, DisableKeepAlives: true}}
	d.shardRaft = raftAddrOf(t, d.ops, d.shard)
	d.controlRaft = raftAddrOf(t, d.ops, d.control)
	return d
}

func raftAddrOf(t *testing.T, ops *http.Client, addr string) string {
	t.Helper()
	r := getVia(t, ops, "https://"+addr+"/internal/v1/status")
	require.Equal(t, 200, r.Status, string(r.Raw))
	raft, _ := r.Body["raft_addr"].(string)
	require.NotEmpty(t, raft, string(r.Raw))
	return raft
}

// keepAlive is a client that asks over one connection, opened before a
// flood, so it can still ask once descriptors are gone.
func keepAlive(t *testing.T, cfg *tls.Config) *http.Client {
	hc := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: cfg, MaxConnsPerHost: 1}}
	t.Cleanup(hc.CloseIdleConnections)
	return hc
}

// readyProbes are keep-alive clients of the three roles' /readyz.
type readyProbes struct {
	d              *limitedDev
	gw, ctl, shard *http.Client
}

func (d *limitedDev) probes(t *testing.T) readyProbes {
	t.Helper()
	tlsCfg := d.ops.Transport.(*http.Transport).TLSClientConfig
	p := readyProbes{d: d, gw: keepAlive(t, nil), ctl: keepAlive(t, tlsCfg), shard: keepAlive(t, tlsCfg)}
	for _, r := range p.all(t) {
		require.Equal(t, 200, r.Status, string(r.Raw))
	}
	return p
}

// all asks each role's /readyz: gateway, control, shard.
func (p readyProbes) all(t *testing.T) []reply {
	return []reply{getVia(t, p.gw, "http://"+p.d.gateway+"/readyz"), getVia(t, p.ctl, "https://"+p.d.control+"/readyz"),
		getVia(t, p.shard, "https://"+p.d.shard+"/readyz")}
}

// flood opens connections to addr that send nothing, from the loopback
// addresses 127.0.0.1 up to 127.0.0.<sources>, in turn, until n are open
// or a dial fails (the server's backlog is full); the test's cleanup
// closes any left open.
func flood(t *testing.T, addr string, n, sources int) []net.Conn {
	t.Helper()
	conns := make([]net.Conn, 0, n)
	t.Cleanup(func() { closeAll(conns) })
	for i := range n {
		d := net.Dialer{Timeout: 2 * time.Second, LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, byte(1+i%sources))}}
		c, err := d.Dial("tcp", addr)
		if err != nil {
			break
		}
		conns = append(conns, c)
	}
	return conns
}

func closeAll(conns []net.Conn) {
	for _, c := range conns {
		c.Close()
	}
}

// handshakes reports whether a TLS server accepts a connection on addr
// and speaks: its handshake ends, in success or in an alert (no client
// certificate), rather than in silence.
func handshakes(addr string) error {
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(3 * time.Second))
	tc := tls.Client(c, &tls.Config{InsecureSkipVerify: true})
	err = tc.Handshake()
	if err == nil {
		// TLS 1.3: the server judges the client's certificate after the
		// client's side is done; a read hears its verdict, or waits.
		_, err = tc.Read(make([]byte, 1))
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return fmt.Errorf("%s accepted nothing, or did not speak: %w", addr, err)
	}
	return nil
}

// serving checks every listener of d once, with fresh connections: the
// public API, control's and the shard's internal HTTPS, the metrics port,
// the tunnel port and both Raft ports.
func (d *limitedDev) serving(t *testing.T) error {
	plain := &http.Client{Timeout: 3 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	if r := getVia(t, plain, "http://"+d.gateway+"/healthz"); r.Status != 200 {
		return fmt.Errorf("public: %d %s", r.Status, r.Raw)
	}
	return d.internalServing(t)
}

// internalServing is serving but for the public port.
func (d *limitedDev) internalServing(t *testing.T) error {
	checks := []struct {
		name string
		url  string
		hc   *http.Client
	}{{"control", "https://" + d.control + "/readyz", d.ops},
		{"shard", "https://" + d.shard + "/readyz", d.ops}, {"metrics", "https://" + d.metrics + "/metrics", d.ops}}
	for _, c := range checks {
		if r := getVia(t, c.hc, c.url); r.Status != 200 {
			return fmt.Errorf("%s: %d %s", c.name, r.Status, r.Raw)
		}
	}
	for _, a := range []string{d.tunnel, d.shardRaft, d.controlRaft} {
		if err := handshakes(a); err != nil {
			return err
		}
	}
	return nil
}

// Every listener of a `jobbie dev` that ran out of descriptors serves
// again once they are free, and each role's /readyz said it could not
// meanwhile. The public port's total cap is lifted so idle connections
// there can spend every descriptor; the internal ports are then dialled once
// each, as the self-hosted nodes, gateways and peers would.
func TestEveryListenerServesAgainAfterDescriptorsRunOut(t *testing.T) {
	t.Parallel()
	const nofile = 1024
	d := startLimitedDev(t, nofile, "--max-conns", "-1")
	require.NoError(t, d.serving(t))
	probes := d.probes(t)

	held := flood(t, d.gateway, nofile+500, 4) // under the per-address cap
	t.Logf("%d idle connections to the public port; the process holds %d descriptors", len(held), descriptors(t, d.pid))
	var internal []net.Conn
	for _, a := range []string{d.control, d.shard, d.metrics, d.tunnel} {
		if c, err := net.DialTimeout("tcp", a, 2*time.Second); err == nil {
			internal = append(internal, c)
		}
	}
	defer closeAll(internal)

	var seen []reply
	exhausted := holdsWithin(20*time.Second, func() bool {
		seen = probes.all(t)
		for _, r := range seen {
			if r.Status != 503 || !strings.Contains(string(r.Raw), "too many open files") {
				return false
			}
		}
		return true
	})
	if assert.True(t, exhausted, "every role's /readyz fails while descriptors are exhausted; last answers %s", answers(seen)) {
		for _, r := range seen {
			assert.Contains(t, string(r.Raw), "cannot accept connections")
		}
		t.Logf("gateway /readyz said: %s", seen[0].Raw)
	}

	closeAll(held)
	released := time.Now()
	var last error
	if !holdsWithin(60*time.Second, func() bool { last = d.serving(t); return last == nil }) {
		t.Fatalf("every listener serves again once descriptors are free; still: %v", last)
	}
	t.Logf("every listener served again %s after the flood ended", time.Since(released).Round(time.Millisecond))
	eventually(t, 10*time.Second, func() bool {
		for _, r := range probes.all(t) {
			if r.Status != 200 {
				return false
			}
		}
		return true
	}, "every role's /readyz is 200 again")
	r := call(t, "POST", "http://"+d.gateway+"/api/v1/enqueue", d.ownerKey, map[string]any{"queue": "after-emfile"})
	require.Equal(t, 201, r.Status, string(r.Raw))
}

// Silent connections to the tunnel port, without a certificate, from
// twenty addresses, leave the public API and every internal port
// serving: unfinished handshakes there are capped in all and per
// address, apart from the public port's descriptors.
func TestTunnelFloodLeavesThePublicAPIServing(t *testing.T) {
	t.Parallel()
	d := startLimitedDev(t, 1024)
	require.NoError(t, d.serving(t))

	held := flood(t, d.tunnel, 3000, 20)
	t.Logf("%d connections to the tunnel port; the process holds %d descriptors", len(held), descriptors(t, d.pid))
	plain := &http.Client{Timeout: 3 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	r := getVia(t, plain, "http://"+d.gateway+"/healthz")
	require.Equal(t, 200, r.Status, "the public API serves during the tunnel flood: %s", r.Raw)
	r = callVia(t, plain, "POST", "http://"+d.gateway+"/api/v1/enqueue", d.ownerKey, map[string]any{"queue": "tunnel-flood"})
	require.Equal(t, 201, r.Status, string(r.Raw))
	require.NoError(t, d.serving(t), "every listener serves during the tunnel flood")
	require.Less(t, descriptors(t, d.pid), 1024-200, "the flood holds few descriptors")
	refused := scrapeMetricVia(t, d.ops, "https://"+d.metrics, `jobbie_listener_refused_total{cap="handshakes",listener="tunnel"}`)
	require.Positive(t, refused, "connections over the cap of unfinished handshakes were closed at once")
}

// Idle connections to the public port from twenty addresses, more than
// the descriptor limit, are held to its total cap (a new connection there
// is closed at once while it is full): the other ports go on serving and
// /readyz stays 200.
func TestPublicFloodIsHeldToItsTotalCap(t *testing.T) {
	t.Parallel()
	const nofile = 1024
	d := startLimitedDev(t, nofile)
	probes := d.probes(t)

	held := flood(t, d.gateway, nofile+500, 20)
	t.Logf("%d connections to the public port; the process holds %d descriptors", len(held), descriptors(t, d.pid))
	require.NoError(t, d.internalServing(t), "every other listener serves during the public flood")
	require.LessOrEqual(t, descriptors(t, d.pid), nofile-100, "the public port holds no more than its share")
	for _, r := range probes.all(t) {
		require.Equal(t, 200, r.Status, string(r.Raw))
	}
	refused := scrapeMetricVia(t, d.ops, "https://"+d.metrics, `jobbie_listener_refused_total{cap="connections",listener="public"}`)
	require.Positive(t, refused, "connections over the total cap were closed at once")
}

// scrapeMetricVia is the value of one series (name with its labels, as
// /metrics prints it) at base, through hc; -1 when absent.
func scrapeMetricVia(t *testing.T, hc *http.Client, base, series string) float64 {
	t.Helper()
	r := callVia(t, hc, "GET", base+"/metrics", "", nil)
	require.Equal(t, 200, r.Status)
	for _, line := range strings.Split(string(r.Raw), "\n") {
		if v, ok := strings.CutPrefix(line, series+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			require.NoError(t, err)
			return f
		}
	}
	return -1
}

// answers lists replies as status and body, for a failure's message.
func answers(rs []reply) string {
	var b strings.Builder
	for _, r := range rs {
		fmt.Fprintf(&b, "\n%d %s", r.Status, r.Raw)
	}
	return b.String()
}

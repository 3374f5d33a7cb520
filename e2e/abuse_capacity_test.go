package e2e

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestGatewayCapacity measures what one gateway holds: idle connections,
// then parked long-polls, with the gateway's memory (RSS) at each count.
// It runs only when JOBBIE_GATEWAY_CAPACITY is set, to
// "<idle connections>,<long-polls>" (docs/BENCHMARKS.md has the figures);
// the test process and the gateway need a descriptor limit above the
// idle count, and above twice the long-polls.
func TestGatewayCapacity(t *testing.T) {
	spec := os.Getenv("JOBBIE_GATEWAY_CAPACITY")
	if spec == "" {
		t.Skip("set JOBBIE_GATEWAY_CAPACITY=<idle>,<long-polls> to measure")
	}
	var idle, polls int
	_, err := fmt.Sscanf(spec, "%d,%d", &idle, &polls)
	require.NoError(t, err, "JOBBIE_GATEWAY_CAPACITY=<idle>,<long-polls>")
	_, ct := shared.tenant(t)
	unlimited := func() *gatewayProc {
		gw := startGateway(t, shared.control, 0,
			"--max-conns", "-1", "--max-conns-per-addr", "-1", "--max-long-polls-per-key", "-1", "--max-long-polls-per-tenant", "-1")
		t.Logf("gateway started: RSS %s", rss(t, gw.pid))
		return gw
	}
	gw := unlimited()
	open := func() float64 { return scrapeMetric(t, gw.metrics, "jobbie_gateway_open_connections") }

	// Idle connections that send nothing (the gateway drops them after
	// ReadTimeout, 30 s, so they are counted at once).
	start := time.Now()
	conns := make([]net.Conn, 0, idle)
	for range idle {
		c, err := net.DialTimeout("tcp", gw.addr, 10*time.Second)
		require.NoError(t, err)
		conns = append(conns, c)
	}
	eventually(t, 20*time.Second, func() bool { return open() >= float64(idle) }, "the gateway accepted every connection")
	t.Logf("%d idle connections (opened in %s): RSS %s", idle, time.Since(start).Round(time.Millisecond), rss(t, gw.pid))
	for _, c := range conns {
		c.Close()
	}
	eventually(t, 30*time.Second, func() bool { return open() <= 1 }, "the idle connections are closed")
	t.Logf("after they closed: RSS %s", rss(t, gw.pid))

	// Long-polls parked on an empty queue, each on its own connection, on
	// a fresh gateway (Go keeps the memory the idle ones used).
	gw = unlimited()
	body := `{"queues":["capacity"],"worker_id":"w","timeout":60}`
	req := "POST /api/v1/fetch HTTP/1.1\r\nHost: gateway\r\nAuthorization: Bearer " + ct.OwnerKey +
		"\r\nContent-Type: application/json\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body
	start = time.Now()
	conns = conns[:0]
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for range polls {
		c, err := net.DialTimeout("tcp", gw.addr, 10*time.Second)
		require.NoError(t, err)
		conns = append(conns, c)
		_, err = c.Write([]byte(req))
		require.NoError(t, err)
	}
	parked := func() float64 { return scrapeMetric(t, gw.metrics, "jobbie_gateway_long_polls") }
	eventually(t, 40*time.Second, func() bool { return parked() >= float64(polls) }, "every long-poll parked")
	t.Logf("%d parked long-polls (sent in %s): RSS %s, %d descriptors", polls, time.Since(start).Round(time.Millisecond), rss(t, gw.pid), descriptors(t, gw.pid))
	for _, c := range conns {
		c.Close()
	}

	// The same idle flood from one address against the default limits,
	// while a client from another loopback address asks for /healthz.
	gw = startGateway(t, shared.control, 0)
	start = time.Now()
	conns = conns[:0]
	for range idle {
		c, err := net.DialTimeout("tcp", gw.addr, 10*time.Second)
		require.NoError(t, err)
		conns = append(conns, c)
	}
	elsewhere := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 2)}}
	hc := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DialContext: elsewhere.DialContext, DisableKeepAlives: true}}
	asked := time.Now()
	r := getVia(t, hc, gw.url+"/healthz")
	require.Equal(t, 200, r.Status, string(r.Raw))
	t.Logf("defaults, %d idle connections from one address (opened in %s): gateway holds %d descriptors, RSS %s; another address served in %s",
		idle, asked.Sub(start).Round(time.Millisecond), descriptors(t, gw.pid), rss(t, gw.pid), time.Since(asked).Round(time.Millisecond))
}

// descriptors is how many files a process has open.
func descriptors(t *testing.T, pid int) int {
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	require.NoError(t, err)
	return len(fds)
}

// rss is a process's resident memory, from /proc.
func rss(t *testing.T, pid int) string {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	require.NoError(t, err)
	for _, line := range bytes.Split(raw, []byte("\n")) {
		if v, ok := strings.CutPrefix(string(line), "VmRSS:"); ok {
			kb, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			require.NoError(t, err)
			return fmt.Sprintf("%.0f MiB", float64(kb)/1024)
		}
	}
	t.Fatal("no VmRSS")
	return ""
}

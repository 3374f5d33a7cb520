package e2e

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jobbie/jobbie/e2e/internal/devproc"
	"github.com/jobbie/jobbie/e2e/internal/freeport"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/client"
)

var (
	binary string
	shared *devServer // one server for the tests that do not kill it
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	tmp, err := os.MkdirTemp("", "jobbie-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(tmp)
	if binary, err = devproc.Binary(tmp); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	shared, err = launch(filepath.Join(tmp, "shared"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "start jobbie dev:", err)
		return 1
	}
	code := m.Run()
	shared.stop()
	return code
}

// devServer is a running `jobbie dev` process, with its addresses under
// the names the tests use.
type devServer struct {
	*devproc.Dev
	dir                     string
	gateway, control, shard string // base URLs: http:// for the gateway, https:// for the others
	metrics                 string // the gateway's --metrics-addr, https://
	ownerKey, operatorKey   string
	ops                     *http.Client // the operator certificate of <dir>/pki, trusting its CA
}

// launch starts `jobbie dev` on fresh loopback ports (gateway, control,
// shard, gateway metrics) and waits until it prints that it is running.
func launch(dir string, flags ...string) (*devServer, error) {
	ports, err := freeport.Loopback(4)
	if err != nil {
		return nil, err
	}
	return launchOn(dir, ports, flags...)
}

func launchOn(dir string, ports []string, flags ...string) (*devServer, error) {
	return startDev(devproc.Config{Dir: dir, Addr: ports[0], ControlAddr: ports[1], ShardAddr: ports[2], MetricsAddr: ports[3],
		Flags: flags})
}

func startDev(c devproc.Config) (*devServer, error) {
	d, err := devproc.StartDev(binary, c)
	if err != nil {
		return nil, err
	}
	return &devServer{Dev: d, dir: d.Dir, gateway: d.Gateway, control: d.Control, shard: d.Shard, metrics: d.Metrics,
		ownerKey: d.OwnerKey, operatorKey: d.OperatorKey, ops: d.Ops}, nil
}

// stop ends the process gracefully and waits for it.
func (d *devServer) stop() { d.Stop() }

// kill ends the process with SIGKILL, as a crash would.
func (d *devServer) kill() { d.Kill() }

// startProcess runs the binary with args, its output in logName, until
// the test ends.
func startProcess(t *testing.T, logName string, args ...string) *devproc.Proc {
	t.Helper()
	p, err := devproc.Start(exec.Command(binary, args...), logName, "")
	require.NoError(t, err)
	t.Cleanup(p.Stop)
	return p
}

// ports are the addresses launchOn takes, to start again where d ran.
func (d *devServer) ports() []string {
	return []string{d.Addr, d.ControlAddr, d.ShardAddr, d.MetricsAddr}
}

// hostPort is a base URL's host:port.
func hostPort(url string) string {
	return strings.TrimPrefix(strings.TrimPrefix(url, "http://"), "https://")
}

var tenantSeq atomic.Int64

// tenant creates a fresh tenant on d and returns its owner's client.
func (d *devServer) tenant(t *testing.T) (*client.Client, *client.CreatedTenant) {
	t.Helper()
	op := client.New(d.control, d.operatorKey, client.WithHTTPClient(d.ops))
	name := fmt.Sprintf("t%d-%d", time.Now().UnixNano()%1e9, tenantSeq.Add(1))
	ct, err := op.CreateTenant(ctx(t), name)
	require.NoError(t, err)
	return client.New(d.gateway, ct.OwnerKey), ct
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}

// eventually polls cond until it holds or d passes.
func eventually(t *testing.T, d time.Duration, cond func() bool, msg string) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not within %s: %s", d, msg)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

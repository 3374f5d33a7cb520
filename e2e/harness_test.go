package e2e

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

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
	binary = os.Getenv("JOBBIE_BIN")
	if binary == "" {
		binary = filepath.Join(tmp, "jobbie")
		build := exec.Command("go", "build", "-o", binary, "../cmd/jobbie")
		build.Stdout, build.Stderr = os.Stdout, os.Stderr
		if err := build.Run(); err != nil {
			fmt.Fprintln(os.Stderr, "build jobbie:", err)
			return 1
		}
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

// devServer is a running `jobbie dev` process.
type devServer struct {
	dir                     string
	gateway, control, shard string // base URLs: http:// for the gateway, https:// for the others
	metrics                 string // the gateway's --metrics-addr, https://
	ownerKey, operatorKey   string
	ops                     *http.Client // the operator certificate of <dir>/pki, trusting its CA
	cmd                     *exec.Cmd
	exited                  chan struct{}
	stopped                 atomic.Bool
}

// launch starts `jobbie dev` on fresh loopback ports (gateway, control,
// shard, gateway metrics) and waits until it prints that it is running.
func launch(dir string) (*devServer, error) {
	ports, err := freeport.Loopback(4)
	if err != nil {
		return nil, err
	}
	return launchOn(dir, ports)
}

func launchOn(dir string, ports []string) (*devServer, error) {
	cmd := exec.Command(binary, "dev", "--data-dir", dir, "--addr", ports[0], "--control-addr", ports[1], "--shard-addr", ports[2],
		"--metrics-addr", ports[3])
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	logf, err := os.OpenFile(dir+".log", os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	cmd.Stderr = logf
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	d := &devServer{dir: dir, gateway: "http://" + ports[0], control: "https://" + ports[1], shard: "https://" + ports[2],
		metrics: "https://" + ports[3], cmd: cmd, exited: make(chan struct{})}
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stdout)
		signalled := false
		for sc.Scan() {
			fmt.Fprintln(logf, sc.Text())
			if !signalled && strings.HasPrefix(sc.Text(), "Jobbie is running.") {
				signalled = true
				close(ready)
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
	}()
	go func() { _ = cmd.Wait(); logf.Close(); close(d.exited) }()
	select {
	case <-ready:
	case <-d.exited:
		return nil, fmt.Errorf("jobbie dev exited before it was ready; see %s.log", dir)
	case <-time.After(60 * time.Second):
		d.kill()
		return nil, fmt.Errorf("jobbie dev not ready after 60s; see %s.log", dir)
	}
	d.ownerKey, err = readKey(filepath.Join(dir, "owner.key"))
	if err != nil {
		return nil, err
	}
	if d.operatorKey, err = readKey(filepath.Join(dir, "operator.key")); err != nil {
		return nil, err
	}
	cfg, err := devOperatorTLS(dir)
	if err != nil {
		return nil, err
	}
	d.ops = &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{TLSClientConfig: cfg}}
	return d, nil
}

func readKey(path string) (string, error) {
	b, err := os.ReadFile(path)
	return strings.TrimSpace(string(b)), err
}

// stop ends the process gracefully and waits for it.
func (d *devServer) stop() {
	if d.stopped.Swap(true) {
		return
	}
	_ = d.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-d.exited:
	case <-time.After(20 * time.Second):
		_ = d.cmd.Process.Kill()
		<-d.exited
	}
	if d.ops != nil {
		d.ops.CloseIdleConnections()
	}
}

// kill ends the process with SIGKILL, as a crash would.
func (d *devServer) kill() {
	d.stopped.Store(true)
	_ = d.cmd.Process.Kill()
	<-d.exited
	if d.ops != nil {
		d.ops.CloseIdleConnections()
	}
}

// ports are the addresses launchOn takes, to start again where d ran.
func (d *devServer) ports() []string {
	var out []string
	for _, u := range []string{d.gateway, d.control, d.shard, d.metrics} {
		out = append(out, hostPort(u))
	}
	return out
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

package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jobbie/jobbie/e2e/internal/freeport"

	"github.com/stretchr/testify/require"
)

// localCluster is a running `jobbie dev --shards N --replicas R`: every
// role its own process, listed in cluster.json.
type localCluster struct {
	t                     *testing.T
	dir                   string
	gateway, control      string // base URLs: http:// and https://
	ownerKey, operatorKey string
	ops, quick            *http.Client // the operator certificate of <dir>/pki; quick gives up after 2 s
	cmd                   *exec.Cmd
	exited                chan struct{}
}

// clusterProc is one process of cluster.json.
type clusterProc struct {
	Role    string `json:"role"`
	ShardID string `json:"shard_id"`
	NodeID  string `json:"node_id"`
	PID     int    `json:"pid"`
	HTTP    string `json:"http"`
	Status  string `json:"status"`
}

func launchCluster(t *testing.T, shards, replicas int) *localCluster {
	t.Helper()
	dir := t.TempDir()
	ports, err := freeport.Loopback(2)
	require.NoError(t, err)
	cmd := exec.Command(binary, "dev", "--shards", fmt.Sprint(shards), "--replicas", fmt.Sprint(replicas),
		"--data-dir", dir, "--addr", ports[0], "--control-addr", ports[1])
	logf, err := os.Create(filepath.Join(dir, "dev.log"))
	require.NoError(t, err)
	ready, err := startLogged(cmd, logf, "Jobbie is running")
	require.NoError(t, err)
	c := &localCluster{t: t, dir: dir, gateway: "http://" + ports[0], control: "https://" + ports[1], cmd: cmd, exited: make(chan struct{})}
	go func() { _ = cmd.Wait(); logf.Close(); close(c.exited) }()
	t.Cleanup(c.stop)
	select {
	case <-ready:
	case <-c.exited:
		t.Fatalf("jobbie dev exited before it was ready; logs in %s", dir)
	case <-time.After(120 * time.Second):
		t.Fatalf("jobbie dev not ready after 120s; logs in %s", dir)
	}
	for _, k := range []struct {
		dst  *string
		file string
	}{{&c.ownerKey, "owner.key"}, {&c.operatorKey, "operator.key"}} {
		*k.dst, err = readKey(filepath.Join(dir, k.file))
		require.NoError(t, err)
	}
	c.ops = devPKIClient(t, dir)
	cfg, err := devOperatorTLS(dir)
	require.NoError(t, err)
	c.quick = tlsClient(t, cfg, 2*time.Second)
	return c
}

func (c *localCluster) stop() {
	if c.t.Failed() {
		dumpLogs(c.t, filepath.Join(c.dir, "logs", "*.log"))
	}
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-c.exited:
	case <-time.After(30 * time.Second):
		_ = c.cmd.Process.Kill()
		<-c.exited
	}
}

// procs reads cluster.json.
func (c *localCluster) procs() []clusterProc {
	c.t.Helper()
	raw, err := os.ReadFile(filepath.Join(c.dir, "cluster.json"))
	require.NoError(c.t, err)
	var cf struct {
		Processes []clusterProc `json:"processes"`
	}
	require.NoError(c.t, json.Unmarshal(raw, &cf))
	return cf.Processes
}

type nodeState struct {
	State    string `json:"state"`
	Ready    bool   `json:"ready"`
	LeaderID string `json:"leader_id"`
	Term     uint64 `json:"term"`
}

// status asks a shard node, as the operator, how it sees its group; false
// when it does not answer.
func (c *localCluster) status(p clusterProc) (nodeState, bool) {
	req, err := newRequest("GET", "https://"+p.HTTP+"/internal/v1/status", "", nil)
	if err != nil {
		return nodeState{}, false
	}
	res, err := c.quick.Do(req)
	if err != nil {
		return nodeState{}, false
	}
	defer res.Body.Close()
	var s nodeState
	if res.StatusCode != 200 || json.NewDecoder(res.Body).Decode(&s) != nil {
		return nodeState{}, false
	}
	return s, true
}

// leader waits until one node of the shard leads and is ready, other than
// the process notPID (0 for any), and returns it.
func (c *localCluster) leader(shardID string, notPID int, within time.Duration) (clusterProc, bool) {
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		for _, p := range c.procs() {
			if p.Role != "shard" || p.ShardID != shardID || p.PID == notPID || p.PID == 0 {
				continue
			}
			if s, ok := c.status(p); ok && s.State == "leader" && s.Ready {
				return p, true
			}
		}
		time.Sleep(25 * time.Millisecond)
	}
	return clusterProc{}, false
}

// newRequest is a JSON request with key as bearer (none when empty).
func newRequest(method, url, key string, body any) (*http.Request, error) {
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		return nil, err
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	req.Header.Set("Content-Type", "application/json")
	return req, nil
}

// chaosClient bounds each call to the gateway, so a call caught in a
// failover returns.
var chaosClient = &http.Client{Timeout: 15 * time.Second}

// startLogged starts cmd with its output going to logf, and closes the
// returned channel when a line of stdout contains marker (a role prints
// one when it is ready).
func startLogged(cmd *exec.Cmd, logf *os.File, marker string) (<-chan struct{}, error) {
	cmd.Stderr = logf
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stdout)
		signalled := false
		for sc.Scan() {
			fmt.Fprintln(logf, sc.Text())
			if !signalled && strings.Contains(sc.Text(), marker) {
				signalled = true
				close(ready)
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
	}()
	return ready, nil
}

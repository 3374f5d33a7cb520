package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/jobbie/jobbie/e2e/internal/devproc"
	"github.com/jobbie/jobbie/e2e/internal/freeport"

	"github.com/stretchr/testify/require"
)

// localCluster is a running `jobbie dev --shards N --replicas R`: every
// role its own process, listed in cluster.json.
type localCluster struct {
	*devproc.Dev
	t                     *testing.T
	dir                   string
	gateway, control      string // base URLs: http:// and https://
	ownerKey, operatorKey string
	ops, quick            *http.Client // the operator certificate of <dir>/pki; quick gives up after 2 s
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

// launchCluster starts the cluster, its gateway given extra flags too.
func launchCluster(t *testing.T, shards, replicas int, extra ...string) *localCluster {
	t.Helper()
	dir := t.TempDir()
	ports, err := freeport.Loopback(2)
	require.NoError(t, err)
	d, err := devproc.StartDev(binary, devproc.Config{Dir: dir, Log: filepath.Join(dir, "dev.log"), Addr: ports[0],
		ControlAddr: ports[1], Flags: append([]string{"--shards", fmt.Sprint(shards), "--replicas", fmt.Sprint(replicas)}, extra...),
		ReadyWithin: 120 * time.Second, StopGrace: 30 * time.Second})
	if err != nil {
		dumpLogs(t, filepath.Join(dir, "logs", "*.log"))
		t.Fatal(err)
	}
	c := &localCluster{Dev: d, t: t, dir: dir, gateway: d.Gateway, control: d.Control, ownerKey: d.OwnerKey,
		operatorKey: d.OperatorKey, ops: d.Ops}
	t.Cleanup(c.stop)
	cfg, err := devproc.OperatorTLS(dir)
	require.NoError(t, err)
	c.quick = tlsClient(t, cfg, 2*time.Second)
	return c
}

func (c *localCluster) stop() {
	if c.t.Failed() {
		dumpLogs(c.t, filepath.Join(c.dir, "logs", "*.log"))
	}
	c.Stop()
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

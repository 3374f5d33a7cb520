package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jobbie/jobbie/e2e/internal/devproc"
	"github.com/jobbie/jobbie/e2e/internal/freeport"

	"github.com/stretchr/testify/require"
)

// shardNS is the shard namespace the cluster tests write in (the shape of
// tenancy.ShardNamespace; shards trust the caller with it).
const shardNS = "t_01hx0000000000000000000000/default"

// shardCluster is one shard cluster of real `jobbie shard` processes on
// loopback, each on its own certificate of shard s1 from the test's CA,
// talked to over its internal API as a gateway (/api/v1) or an operator
// (/internal/v1, and the `jobbie shard` member commands) would.
type shardCluster struct {
	t        *testing.T
	dir      string
	pki      *testPKI
	keyFile  string   // the gossip key
	extra    []string // flags every node gets
	nodes    map[string]*shardNode
	order    []string
	gw, ops  *http.Client // a gateway's and an operator's certificate
	opsFlags []string     // the operator certificate's --tls-* flags
}

// shardNode is one member; its ports and data directory survive restarts.
type shardNode struct {
	id, dir            string
	http, raft, gossip string
	cmd                *exec.Cmd
	exited             <-chan struct{}
}

// newShardCluster starts n nodes: n1 bootstraps, the others join it, and
// it returns once every node knows the same leader.
func newShardCluster(t *testing.T, n int, extra ...string) *shardCluster {
	t.Helper()
	dir := t.TempDir()
	p := newTestPKI(t)
	c := &shardCluster{t: t, dir: dir, pki: p, keyFile: filepath.Join(dir, "gossip.key"), extra: extra, nodes: map[string]*shardNode{},
		gw: p.client(t, "gateway", "", "gw1"), ops: p.client(t, "operator", "", "e2e"), opsFlags: p.issue(t, "operator", "", "e2e")}
	writeGossipKey(t, c.keyFile)
	t.Cleanup(c.killAll)
	for i := 1; i <= n; i++ {
		id := fmt.Sprintf("n%d", i)
		ports, err := freeport.Loopback(3)
		require.NoError(t, err)
		c.nodes[id] = &shardNode{id: id, dir: filepath.Join(dir, id), http: ports[0], raft: ports[1], gossip: ports[2]}
		c.order = append(c.order, id)
		c.start(id, i == 1)
		if i == 1 {
			c.leader()
		}
	}
	c.converged()
	return c
}

// start runs node id and waits until it serves (a joining node prints its
// line once the leader added it).
func (c *shardCluster) start(id string, bootstrap bool) {
	c.t.Helper()
	n := c.nodes[id]
	args := append([]string{"shard", "--node-id", id, "--shard-id", "s1", "--data-dir", n.dir, "--http", n.http, "--raft", n.raft,
		"--gossip", n.gossip, "--gossip-key-file", c.keyFile}, c.pki.issue(c.t, "shard", "s1", id)...)
	if bootstrap {
		args = append(args, "--bootstrap")
	}
	var peers []string
	for _, other := range c.order {
		if other != id {
			peers = append(peers, c.nodes[other].gossip)
		}
	}
	if len(peers) > 0 {
		args = append(args, "--join", strings.Join(peers, ","))
	}
	cmd := exec.Command(binary, append(args, c.extra...)...)
	p, err := devproc.Start(cmd, filepath.Join(c.dir, id+".log"), " serving https://")
	require.NoError(c.t, err)
	n.cmd, n.exited = cmd, p.Exited()
	if err := p.WaitReady(30 * time.Second); err != nil {
		c.t.Fatalf("node %s: %v", id, err)
	}
}

// kill ends node id with SIGKILL, as a crash would.
func (c *shardCluster) kill(id string) {
	n := c.nodes[id]
	if n.cmd == nil {
		return
	}
	_ = n.cmd.Process.Kill()
	<-n.exited
	n.cmd = nil
}

// exitsByItself waits for node n to exit on its own, with status 0;
// failing names what it waited for.
func (c *shardCluster) exitsByItself(n *shardNode, within time.Duration, failing string) {
	c.t.Helper()
	select {
	case <-n.exited:
	case <-time.After(within):
		c.t.Fatal(failing)
	}
	require.Zero(c.t, n.cmd.ProcessState.ExitCode())
	n.cmd = nil
}

func (c *shardCluster) killAll() {
	if c.t.Failed() {
		dumpLogs(c.t, filepath.Join(c.dir, "*.log"))
	}
	for _, id := range c.order {
		c.kill(id)
	}
}

// running lists the nodes with a live process.
func (c *shardCluster) running() []*shardNode {
	var out []*shardNode
	for _, id := range c.order {
		if c.nodes[id].cmd != nil {
			out = append(out, c.nodes[id])
		}
	}
	return out
}

// nodeStatus is what the tests read of GET /internal/v1/status.
type nodeStatus struct {
	NodeID       string `json:"node_id"`
	State        string `json:"state"`
	Term         uint64 `json:"term"`
	LeaderID     string `json:"leader_id"`
	LeaderHTTP   string `json:"leader_http"`
	Ready        bool   `json:"ready"`
	AppliedIndex uint64 `json:"applied_index"`
	CommitIndex  uint64 `json:"commit_index"`
	Restores     uint64 `json:"restores"`
}

func (c *shardCluster) status(n *shardNode) (nodeStatus, bool) {
	var st nodeStatus
	code, raw, err := c.do(n, http.MethodGet, "/internal/v1/status", nil)
	if err != nil || code != http.StatusOK {
		return st, false
	}
	return st, json.Unmarshal(raw, &st) == nil
}

// leader waits until one running node leads (and has applied its log).
func (c *shardCluster) leader() *shardNode {
	c.t.Helper()
	var out *shardNode
	eventually(c.t, 15*time.Second, func() bool {
		for _, n := range c.running() {
			if st, ok := c.status(n); ok && st.Ready {
				out = n
				return true
			}
		}
		return false
	}, "a shard node leads")
	return out
}

// followers are the running nodes other than leader.
func (c *shardCluster) followers(leader *shardNode) []*shardNode {
	var out []*shardNode
	for _, n := range c.running() {
		if n != leader {
			out = append(out, n)
		}
	}
	return out
}

// converged waits until every running node names the same leader and
// has applied as far as the leader had.
func (c *shardCluster) converged() {
	c.t.Helper()
	l := c.leader()
	ls, _ := c.status(l)
	eventually(c.t, 30*time.Second, func() bool {
		for _, n := range c.running() {
			st, ok := c.status(n)
			if !ok || st.LeaderID != l.id || st.AppliedIndex < ls.AppliedIndex || st.LeaderHTTP != l.http {
				return false
			}
		}
		return true
	}, "every node follows "+l.id+" and has caught up")
}

// do sends one request to node n with the shard namespace: /internal/v1
// as an operator, anything else as a gateway.
func (c *shardCluster) do(n *shardNode, method, path string, body any) (int, []byte, error) {
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			return 0, nil, err
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, "https://"+n.http+path, rd)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("X-Jobbie-Shard-Namespace", shardNS)
	req.Header.Set("Content-Type", "application/json")
	hc := c.gw
	if strings.HasPrefix(path, "/internal/") {
		hc = c.ops
	}
	res, err := hc.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	return res.StatusCode, raw, err
}

// enqueue enqueues one job through n; it returns the id, or "" with the
// status when the node refused (which counts as not acknowledged).
func (c *shardCluster) enqueue(n *shardNode, queue string, seq int) (string, int) {
	code, raw, err := c.do(n, http.MethodPost, "/api/v1/enqueue", map[string]any{"queue": queue, "payload": map[string]int{"seq": seq}})
	if err != nil || code != http.StatusCreated {
		return "", code
	}
	var r struct {
		JobID string `json:"job_id"`
	}
	if json.Unmarshal(raw, &r) != nil {
		return "", code
	}
	return r.JobID, code
}

// jobState is a job's state as node n reads it, or "" if n does not have it.
func (c *shardCluster) jobState(n *shardNode, id string) string {
	code, raw, err := c.do(n, http.MethodGet, "/api/v1/jobs/"+id, nil)
	if err != nil || code != http.StatusOK {
		return ""
	}
	var j struct {
		State string `json:"state"`
	}
	_ = json.Unmarshal(raw, &j)
	return j.State
}

// allPresent waits until node n has every job in ids.
func (c *shardCluster) allPresent(n *shardNode, ids []string, within time.Duration) {
	c.t.Helper()
	missing := ""
	eventually(c.t, within, func() bool {
		for _, id := range ids {
			if c.jobState(n, id) == "" {
				missing = id
				return false
			}
		}
		return true
	}, fmt.Sprintf("node %s has every acknowledged job (missing e.g. %s)", n.id, missing))
}

// cli runs `jobbie shard <args>` against the cluster with the operator
// certificate and returns stdout.
func (c *shardCluster) cli(args ...string) string {
	c.t.Helper()
	cmd := exec.Command(binary, append(append([]string{"shard"}, args...), c.opsFlags...)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	require.NoError(c.t, cmd.Run(), "jobbie shard %v: %s", args, errb.String())
	return out.String()
}

// dumpLogs prints the end of every log the pattern matches, so a failed
// run says what the processes saw before its directory is removed.
func dumpLogs(t *testing.T, pattern string) {
	files, _ := filepath.Glob(pattern)
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		lines := strings.Split(strings.TrimRight(string(raw), "\n"), "\n")
		if len(lines) > 40 {
			lines = lines[len(lines)-40:]
		}
		t.Logf("--- last lines of %s:\n%s", filepath.Base(f), strings.Join(lines, "\n"))
	}
}

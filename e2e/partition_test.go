package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jobbie/jobbie/e2e/internal/devproc"
	"github.com/stretchr/testify/require"
)

// TestMinorityPartition runs a 3-node shard with each node in its own
// network namespace on a bridge, cuts the leader off from the other two
// (blackhole routes; the test itself still reaches every node), and checks that the cut-off node commits nothing while the
// majority elects a leader and keeps serving, and that after healing all
// three hold the same jobs. It needs root and `ip`, and skips where
// network namespaces cannot be made.
func TestMinorityPartition(t *testing.T) {
	net := newTestNet(t, 3)
	acc := newPartitionAccess(t)

	nodes := make([]*nsNode, 3)
	for i := range nodes {
		nodes[i] = net.start(t, i, acc, i == 0)
		if i == 0 {
			waitLeaderIn(t, acc, nodes[:1], "", 30*time.Second)
		}
	}
	leader := waitLeaderIn(t, acc, nodes, "", 30*time.Second)
	var before []string
	for i := range 20 {
		id, status := nsEnqueue(acc, leader, fmt.Sprint("before-", i))
		require.Equal(t, 201, status)
		before = append(before, id)
	}

	net.isolate(t, leader.idx)
	// The cut-off leader cannot reach a quorum: nothing it is asked to
	// write may be acknowledged.
	for i := range 5 {
		_, status := nsEnqueue(acc, leader, fmt.Sprint("minority-", i))
		require.NotEqual(t, 201, status, "the minority acknowledged a write")
	}
	var rest []*nsNode
	for _, n := range nodes {
		if n != leader {
			rest = append(rest, n)
		}
	}
	start := time.Now()
	newLeader := waitLeaderIn(t, acc, rest, "", 30*time.Second)
	t.Logf("majority elected %s %s after the cut", newLeader.id, time.Since(start).Round(time.Millisecond))
	var during []string
	for i := range 20 {
		id, status := nsEnqueue(acc, rest[i%2], fmt.Sprint("majority-", i)) // a follower forwards to the new leader
		require.Equal(t, 201, status, "the majority keeps serving")
		during = append(during, id)
	}

	net.heal(t)
	eventually(t, 30*time.Second, func() bool {
		var applied []uint64
		leaders := 0
		for _, n := range nodes {
			s, ok := nsStatus(acc, n)
			if !ok {
				return false
			}
			if s.State == "leader" && s.Ready {
				leaders++
			}
			applied = append(applied, s.Applied)
		}
		return leaders == 1 && applied[0] == applied[1] && applied[1] == applied[2]
	}, "one leader, and the healed node caught up")
	want := nsQueueJobs(t, acc, newLeader)
	require.Len(t, want, len(before)+len(during), "exactly the acknowledged writes")
	for _, id := range append(append([]string{}, before...), during...) {
		require.Contains(t, want, id)
	}
	for _, n := range nodes {
		require.Equal(t, want, nsQueueJobs(t, acc, n), "node %s diverged", n.id)
	}
}

// testNet is a bridge with one network namespace per node.
type testNet struct {
	tag   string
	nodes int
	cut   int // the node isolate cut off
}

func newTestNet(t *testing.T, n int) *testNet {
	if os.Geteuid() != 0 {
		t.Skip("needs root for network namespaces")
	}
	tag := fmt.Sprintf("j%d", os.Getpid()%10000)
	probe := tag + "probe"
	if err := exec.Command("ip", "netns", "add", probe).Run(); err != nil {
		t.Skipf("cannot make network namespaces here: %v", err)
	}
	_ = exec.Command("ip", "netns", "del", probe).Run()
	tn := &testNet{tag: tag, nodes: n}
	t.Cleanup(tn.teardown)
	br := tag + "br"
	tn.run(t, "ip", "link", "add", br, "type", "bridge")
	tn.run(t, "ip", "addr", "add", "10.231.0.1/24", "dev", br)
	tn.run(t, "ip", "link", "set", br, "up")
	for i := range n {
		ns, host, peer := tn.ns(i), tn.port(i), fmt.Sprintf("%sp%d", tag, i)
		tn.run(t, "ip", "netns", "add", ns)
		tn.run(t, "ip", "link", "add", host, "type", "veth", "peer", "name", peer)
		tn.run(t, "ip", "link", "set", host, "master", br)
		tn.run(t, "ip", "link", "set", host, "up")
		tn.run(t, "ip", "link", "set", peer, "netns", ns)
		tn.run(t, "ip", "netns", "exec", ns, "ip", "addr", "add", tn.ip(i)+"/24", "dev", peer)
		tn.run(t, "ip", "netns", "exec", ns, "ip", "link", "set", peer, "up")
		tn.run(t, "ip", "netns", "exec", ns, "ip", "link", "set", "lo", "up")
	}
	return tn
}

func (tn *testNet) ns(i int) string   { return fmt.Sprintf("%sn%d", tn.tag, i) }
func (tn *testNet) port(i int) string { return fmt.Sprintf("%sv%d", tn.tag, i) }
func (tn *testNet) ip(i int) string   { return fmt.Sprintf("10.231.0.%d", 11+i) }

func (tn *testNet) run(t *testing.T, args ...string) {
	t.Helper()
	out, err := exec.Command(args[0], args[1:]...).CombinedOutput()
	require.NoError(t, err, "%s: %s", strings.Join(args, " "), out)
}

// isolate cuts node i off from the other nodes, both ways, with
// blackhole routes inside the namespaces: i has no route to them and they
// have none to i. The host (the test) still reaches every node.
func (tn *testNet) isolate(t *testing.T, i int) {
	for j := range tn.nodes {
		if j == i {
			continue
		}
		tn.run(t, "ip", "netns", "exec", tn.ns(i), "ip", "route", "add", "blackhole", tn.ip(j)+"/32")
		tn.run(t, "ip", "netns", "exec", tn.ns(j), "ip", "route", "add", "blackhole", tn.ip(i)+"/32")
	}
	tn.cut = i
}

// heal removes the blackhole routes.
func (tn *testNet) heal(t *testing.T) {
	i := tn.cut
	for j := range tn.nodes {
		if j == i {
			continue
		}
		tn.run(t, "ip", "netns", "exec", tn.ns(i), "ip", "route", "del", "blackhole", tn.ip(j)+"/32")
		tn.run(t, "ip", "netns", "exec", tn.ns(j), "ip", "route", "del", "blackhole", tn.ip(i)+"/32")
	}
}

func (tn *testNet) teardown() {
	for i := range tn.nodes {
		_ = exec.Command("ip", "netns", "pids", tn.ns(i)).Run()
		if out, err := exec.Command("ip", "netns", "pids", tn.ns(i)).Output(); err == nil {
			for _, pid := range strings.Fields(string(out)) {
				_ = exec.Command("kill", "-9", pid).Run()
			}
		}
		_ = exec.Command("ip", "link", "del", tn.port(i)).Run()
		_ = exec.Command("ip", "netns", "del", tn.ns(i)).Run()
	}
	_ = exec.Command("ip", "link", "del", tn.tag+"br").Run()
}

// nsNode is a `jobbie shard` inside namespace idx.
type nsNode struct {
	idx  int
	id   string
	http string
	cmd  *exec.Cmd
}

// partitionAccess is what the partition test holds: the shard's CA and
// gossip key, and an operator's clients of the nodes.
type partitionAccess struct {
	pki         *testPKI
	gossipKey   string
	quick, slow *http.Client
}

func newPartitionAccess(t *testing.T) *partitionAccess {
	p := newTestPKI(t)
	a := &partitionAccess{pki: p, gossipKey: filepath.Join(t.TempDir(), "gossip.key")}
	writeGossipKey(t, a.gossipKey)
	// The nodes listen on the bridge's addresses, which their
	// certificates do not name; check their names as localhost.
	cfg := p.tlsConfig(t, "operator", "", "e2e")
	cfg.ServerName = "localhost"
	a.quick, a.slow = tlsClient(t, cfg, 2*time.Second), tlsClient(t, cfg, 15*time.Second)
	return a
}

func (tn *testNet) start(t *testing.T, i int, acc *partitionAccess, bootstrap bool) *nsNode {
	t.Helper()
	ip := tn.ip(i)
	n := &nsNode{idx: i, id: fmt.Sprintf("n%d", i+1), http: ip + ":7101"}
	dir := filepath.Join(t.TempDir(), n.id)
	args := append([]string{"netns", "exec", tn.ns(i), binary, "shard", "--node-id", n.id, "--shard-id", "s1", "--data-dir", dir,
		"--http", n.http, "--raft", ip + ":7201", "--gossip", ip + ":7301", "--gossip-key-file", acc.gossipKey},
		acc.pki.issue(t, "shard", "s1", n.id)...)
	if bootstrap {
		args = append(args, "--bootstrap")
	} else {
		args = append(args, "--join", tn.ip(0)+":7301")
	}
	cmd := exec.Command("ip", args...)
	p, err := devproc.Start(cmd, dir+".log", " serving https://")
	require.NoError(t, err)
	n.cmd = cmd
	t.Cleanup(p.Kill)
	if err := p.WaitReady(30 * time.Second); err != nil {
		t.Fatalf("node %s: %v", n.id, err)
	}
	return n
}

type nsState struct {
	State   string `json:"state"`
	Ready   bool   `json:"ready"`
	Applied uint64 `json:"applied_index"`
}

func nsStatus(acc *partitionAccess, n *nsNode) (nsState, bool) {
	req, err := newRequest("GET", "https://"+n.http+"/internal/v1/status", "", nil)
	if err != nil {
		return nsState{}, false
	}
	res, err := acc.quick.Do(req)
	if err != nil {
		return nsState{}, false
	}
	defer res.Body.Close()
	var s nsState
	return s, res.StatusCode == 200 && json.NewDecoder(res.Body).Decode(&s) == nil
}

// waitLeaderIn waits until one of nodes leads and is ready.
func waitLeaderIn(t *testing.T, acc *partitionAccess, nodes []*nsNode, _ string, within time.Duration) *nsNode {
	t.Helper()
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		for _, n := range nodes {
			if s, ok := nsStatus(acc, n); ok && s.State == "leader" && s.Ready {
				return n
			}
		}
		time.Sleep(25 * time.Millisecond)
	}
	t.Fatalf("no leader among %d nodes within %s", len(nodes), within)
	return nil
}

const partNS = "t_01hx0000000000000000000000/default"

// nsEnqueue writes one job straight to a node (shard API, operator
// certificate).
func nsEnqueue(acc *partitionAccess, n *nsNode, tag string) (string, int) {
	req, err := newRequest("POST", "https://"+n.http+"/api/v1/enqueue", "",
		map[string]any{"queue": "part", "payload": map[string]string{"tag": tag}})
	if err != nil {
		return "", 0
	}
	req.Header.Set("X-Jobbie-Shard-Namespace", partNS)
	res, err := acc.slow.Do(req)
	if err != nil {
		return "", 0
	}
	defer res.Body.Close()
	var out struct {
		JobID string `json:"job_id"`
	}
	_ = json.NewDecoder(res.Body).Decode(&out)
	return out.JobID, res.StatusCode
}

// nsQueueJobs lists every job of the test queue as node n has it.
func nsQueueJobs(t *testing.T, acc *partitionAccess, n *nsNode) []string {
	t.Helper()
	var ids []string
	req, err := newRequest("POST", "https://"+n.http+"/api/v1/jobs/search", "",
		map[string]any{"queue": "part", "limit": 1000, "order": "asc"})
	require.NoError(t, err)
	req.Header.Set("X-Jobbie-Shard-Namespace", partNS)
	res, err := acc.slow.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	var out struct {
		Jobs []struct {
			ID string `json:"id"`
		} `json:"jobs"`
	}
	require.Equal(t, 200, res.StatusCode)
	require.NoError(t, json.NewDecoder(res.Body).Decode(&out))
	for _, j := range out.Jobs {
		ids = append(ids, j.ID)
	}
	return ids
}

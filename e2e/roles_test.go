package e2e

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/jobbie/jobbie/e2e/internal/devproc"
	"github.com/jobbie/jobbie/e2e/internal/freeport"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/client"
)

// The roles apart: `jobbie control`, `jobbie gateway` and two single-node
// shard clusters as separate processes, each on its own certificate from
// one CA, in one encrypted gossip pool. Both shards register with
// control, one tenant's namespaces land on both, and each is served
// through the one gateway.
func TestRolesApartTwoShardsBehindOneGateway(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := newTestPKI(t)
	keyFile := filepath.Join(dir, "gossip.key")
	writeGossipKey(t, keyFile)
	common := []string{"--gossip-key-file", keyFile}
	ports, err := freeport.Loopback(11)
	require.NoError(t, err)
	ctlHTTP, gwHTTP, s1HTTP, s2HTTP := ports[0], ports[1], ports[2], ports[3]
	ctlGossip, gwGossip, s1Gossip, s2Gossip := ports[4], ports[5], ports[6], ports[7]
	ctlRaft, s1Raft, s2Raft := ports[8], ports[9], ports[10]
	controlURL := "https://" + ctlHTTP
	opKeyFile := filepath.Join(dir, "operator.key")
	// The operator's tool: an operator certificate, which control's
	// operator API does not need but accepts.
	hc := p.client(t, "operator", "", "alice")

	startRoleProc(t, dir, "control", append(append([]string{"control", "--data-dir", filepath.Join(dir, "control"),
		"--http", ctlHTTP, "--raft", ctlRaft, "--gossip", ctlGossip, "--operator-key-file", opKeyFile}, common...),
		p.issue(t, "control", "", "control1")...)...)
	waitHTTP(t, hc, controlURL+"/readyz", "control")
	for _, s := range []struct{ id, http, raft, gossip string }{{"s1", s1HTTP, s1Raft, s1Gossip}, {"s2", s2HTTP, s2Raft, s2Gossip}} {
		startRoleProc(t, dir, "shard-"+s.id, append(append([]string{"shard", "--node-id", "n1", "--shard-id", s.id,
			"--data-dir", filepath.Join(dir, s.id), "--http", s.http, "--raft", s.raft, "--gossip", s.gossip,
			"--bootstrap", "--join", ctlGossip, "--control", controlURL}, common...), p.issue(t, "shard", s.id, "n1")...)...)
	}
	startRoleProc(t, dir, "gateway", append(append([]string{"gateway", "--http", gwHTTP, "--control", controlURL,
		"--gossip", gwGossip, "--join", ctlGossip}, common...), p.issue(t, "gateway", "", "gw1")...)...)
	waitHTTP(t, http.DefaultClient, "http://"+gwHTTP+"/readyz", "gateway")

	opKey, err := devproc.ReadKey(opKeyFile)
	require.NoError(t, err)
	operator := &operatorAPI{t: t, hc: hc, base: controlURL, key: opKey}
	eventually(t, 30*time.Second, func() bool {
		shards := operator.shards()
		return len(shards["s1"].Members) == 1 && len(shards["s2"].Members) == 1
	}, "both shard clusters register with control")
	shards := operator.shards()
	require.Equal(t, s1HTTP, hostPort(shards["s1"].Members[0].HTTPAddr))
	require.Equal(t, "n1", shards["s2"].Members[0].NodeID)

	ct, err := client.New(controlURL, opKey, client.WithHTTPClient(hc)).CreateTenant(ctx(t), "roles")
	require.NoError(t, err)
	owner := client.New("http://"+gwHTTP, ct.OwnerKey)
	names := []string{"default", "ns-a", "ns-b", "ns-c"}
	for _, ns := range names[1:] {
		_, err := owner.CreateNamespace(ctx(t), ns)
		require.NoError(t, err)
	}
	placed := operator.placements(ct.Tenant.ID)
	require.Len(t, placed, len(names))
	require.ElementsMatch(t, []string{"s1", "s2"}, uniq(placed), "one tenant's namespaces land on both shards: %v", placed)

	for _, ns := range names {
		c := owner.WithNamespace(ns)
		res, err := c.Enqueue(ctx(t), client.EnqueueRequest{Queue: "work", Payload: map[string]string{"ns": ns}})
		require.NoError(t, err, "enqueue in %s (on %s)", ns, placed[ns])
		j, err := c.Fetch(ctx(t), client.FetchRequest{Queues: []string{"work"}, WorkerID: "w-" + ns, Timeout: 5 * time.Second})
		require.NoError(t, err, "fetch in %s", ns)
		require.NotNil(t, j, "fetch in %s found no job", ns)
		require.Equal(t, res.JobID, j.ID, "each namespace gets its own job back")
		require.JSONEq(t, fmt.Sprintf(`{"ns":%q}`, ns), string(j.Payload))
		require.NoError(t, c.Ack(ctx(t), j.ID, map[string]string{"done": ns}))
		d, err := c.GetJob(ctx(t), j.ID)
		require.NoError(t, err)
		require.Equal(t, "completed", d.State)
	}

	shards = operator.shards()
	count := map[string]uint64{}
	for _, shard := range placed {
		count[shard]++
	}
	require.Equal(t, count["s1"], shards["s1"].Namespaces)
	require.Equal(t, count["s2"], shards["s2"].Namespaces)
	eventually(t, 10*time.Second, func() bool {
		l := operator.shards()["s2"].Leader
		return l != nil && l.NodeID == "n1"
	}, "control's gossip pool knows each shard's leader")
}

// roleShard is what the test reads of GET /control/v1/shards.
type roleShard struct {
	ID         string `json:"id"`
	Namespaces uint64 `json:"namespaces"`
	Members    []struct {
		NodeID   string `json:"node_id"`
		HTTPAddr string `json:"http_addr"`
	} `json:"members"`
	Leader *struct {
		NodeID string `json:"node_id"`
	} `json:"leader"`
}

// operatorAPI calls the control plane's operator endpoints the client
// package does not cover.
type operatorAPI struct {
	t         *testing.T
	hc        *http.Client // trusts control's CA
	base, key string
}

func (o *operatorAPI) get(path string, out any) {
	o.t.Helper()
	req, err := http.NewRequestWithContext(ctx(o.t), http.MethodGet, o.base+path, nil)
	require.NoError(o.t, err)
	req.Header.Set("Authorization", "Bearer "+o.key)
	resp, err := o.hc.Do(req)
	require.NoError(o.t, err)
	defer resp.Body.Close()
	require.Equal(o.t, http.StatusOK, resp.StatusCode, "GET %s", path)
	require.NoError(o.t, json.NewDecoder(resp.Body).Decode(out))
}

func (o *operatorAPI) shards() map[string]roleShard {
	var list struct{ Shards []roleShard }
	o.get("/control/v1/shards", &list)
	out := map[string]roleShard{}
	for _, s := range list.Shards {
		out[s.ID] = s
	}
	return out
}

// placements maps each namespace of tenant tid to its shard.
func (o *operatorAPI) placements(tid string) map[string]string {
	var list struct {
		Namespaces []struct {
			Name    string `json:"name"`
			ShardID string `json:"shard_id"`
		}
	}
	o.get("/control/v1/tenants/"+tid+"/namespaces", &list)
	out := map[string]string{}
	for _, ns := range list.Namespaces {
		out[ns.Name] = ns.ShardID
	}
	return out
}

func uniq(m map[string]string) []string {
	var out []string
	for _, v := range m {
		if !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}

func writeRandomHex(t *testing.T, path string, n int) {
	b := make([]byte, n)
	_, err := rand.Read(b)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, []byte(hex.EncodeToString(b)+"\n"), 0o600))
}

// startRoleProc runs the binary with args until the test ends, its output
// in dir/<name>.log (printed if the test fails).
func startRoleProc(t *testing.T, dir, name string, args ...string) {
	t.Helper()
	logPath := filepath.Join(dir, name+".log")
	t.Cleanup(func() { // runs after the process's own cleanup has stopped it
		if t.Failed() {
			b, _ := os.ReadFile(logPath)
			t.Logf("--- %s log:\n%s", name, b)
		}
	})
	startProcess(t, logPath, args...).Grace = 15 * time.Second
}

// waitHTTP polls url through hc until it answers 200.
func waitHTTP(t *testing.T, hc *http.Client, url, what string) {
	t.Helper()
	eventually(t, 30*time.Second, func() bool {
		resp, err := hc.Get(url)
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}, what+" answers "+url)
}

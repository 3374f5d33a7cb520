package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/e2e/internal/devproc"
	"github.com/jobbie/jobbie/e2e/internal/freeport"
	"github.com/jobbie/jobbie/wire"
)

// A hosted jobbie dev (control, gateway with a tunnel listener, hosted
// shard) and a tenant's self-hosted one-node shard on another loopback
// address, which the hosted side never dials: it joins with the tenant's
// token and serves the tenant's namespace through its outbound tunnel.
func TestSelfHostedShardJoinsAndServesThroughItsTunnel(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ports, err := freeport.Loopback(8)
	require.NoError(t, err)
	hosted := startHosted(t, dir, ports)
	a, ta := hosted.tenant(t)
	b, tb := hosted.tenant(t)

	tok, err := a.CreateJoinToken(ctx(t), "dc1", 10*time.Minute, 1)
	require.NoError(t, err)
	// The self-hosted node: its own loopback address, reached by no one
	// but its own cluster's nodes.
	gk := filepath.Join(dir, "gossip.key")
	writeGossipKey(t, gk)
	node := startProcess(t, filepath.Join(dir, "selfhosted-n1.log"), selfHostedArgs(hosted, dir, ports, 0, "n1", gk, tok.Token)...)
	eventually(t, 30*time.Second, func() bool { return node.Count("serving https://") > 0 }, "the self-hosted node serves")

	var shards []client.OwnedShard
	eventually(t, 30*time.Second, func() bool {
		shards, err = a.Shards(ctx(t))
		require.NoError(t, err)
		return len(shards) == 1 && len(shards[0].Connected) == 1
	}, "the node's tunnel is up")
	require.Equal(t, tok.ShardID, shards[0].ID)
	require.Equal(t, []string{"n1"}, shards[0].Nodes)
	require.Equal(t, []string{"n1"}, shards[0].Connected)
	// Its health, as the node answers the gateway through its tunnel.
	eventually(t, 30*time.Second, func() bool {
		shards, err = a.Shards(ctx(t))
		require.NoError(t, err)
		return len(shards) == 1 && shards[0].Health != nil && shards[0].Health.Healthy
	}, "the shard's health is listed, healthy")
	h := shards[0].Health
	require.Equal(t, tok.ShardID, h.ShardID)
	require.Equal(t, "n1", h.LeaderID)
	require.Len(t, h.Nodes, 1)
	require.Equal(t, []any{"n1", wire.NodeLeader, wire.NodeHealthy}, []any{h.Nodes[0].ID, h.Nodes[0].Role, h.Nodes[0].Status})
	require.NotNil(t, h.Nodes[0].Lag, "its replication figures come through the tunnel too")

	// Another tenant neither sees nor uses it.
	bShards, err := b.Shards(ctx(t))
	require.NoError(t, err)
	require.Empty(t, bShards)
	_, err = b.CreateNamespaceOn(ctx(t), "steal", tok.ShardID)
	require.True(t, client.IsNotFound(err), "%v", err)
	require.True(t, client.IsNotFound(b.RevokeShard(ctx(t), tok.ShardID)))
	// Least-loaded placement never lands there either.
	for i := range 3 {
		_, err := b.CreateNamespace(ctx(t), fmt.Sprintf("b%d", i))
		require.NoError(t, err)
	}
	for _, pl := range placements(t, hosted, tb.Tenant.ID) {
		require.NotEqual(t, tok.ShardID, pl.ShardID, pl.Name)
	}

	// The owner's namespace on it: the whole lifecycle through the gateway.
	_, err = a.CreateNamespaceOn(ctx(t), "onprem", tok.ShardID)
	require.NoError(t, err)
	on := map[string]string{}
	for _, pl := range placements(t, hosted, ta.Tenant.ID) {
		on[pl.Name] = pl.ShardID
	}
	require.Equal(t, tok.ShardID, on["onprem"])
	require.NotEqual(t, tok.ShardID, on["default"])
	onprem := client.New(hosted.gateway, ta.OwnerKey, client.WithNamespace("onprem"))
	var res *client.EnqueueResult
	eventually(t, 30*time.Second, func() bool {
		res, err = onprem.Enqueue(ctx(t), client.EnqueueRequest{Queue: "local", Payload: map[string]int{"n": 1}})
		return err == nil
	}, "the tunnel carries an enqueue")
	j, err := onprem.Fetch(ctx(t), client.FetchRequest{Queues: []string{"local"}, WorkerID: "w1", Timeout: 5 * time.Second})
	require.NoError(t, err)
	require.NotNil(t, j)
	require.Equal(t, res.JobID, j.ID)
	require.NoError(t, onprem.Ack(ctx(t), j.ID, map[string]bool{"ok": true}))
	d, err := onprem.GetJob(ctx(t), j.ID)
	require.NoError(t, err)
	require.Equal(t, "completed", d.State)
	// The tenant's hosted namespace does not know the job.
	_, err = a.GetJob(ctx(t), j.ID)
	require.True(t, client.IsNotFound(err), "%v", err)
	// Tenant B cannot reach the namespace.
	_, err = client.New(hosted.gateway, tb.OwnerKey, client.WithNamespace("onprem")).GetJob(ctx(t), j.ID)
	require.Error(t, err)

	// Revoke: refused while the namespace is on it, then done; the node
	// is cut off and refused on every reconnect.
	require.True(t, client.IsConflict(a.RevokeShard(ctx(t), tok.ShardID)))
	require.NoError(t, a.DeleteNamespace(ctx(t), "onprem", true))
	downs := node.Count("tunnel: down")
	require.NoError(t, a.RevokeShard(ctx(t), tok.ShardID))
	eventually(t, 30*time.Second, func() bool { return node.Count("tunnel: down") >= downs+2 }, "the revoked node is cut off and refused again")
	shards, err = a.Shards(ctx(t))
	require.NoError(t, err)
	require.Empty(t, shards)
	_, err = a.CreateNamespaceOn(ctx(t), "again", tok.ShardID)
	require.True(t, client.IsNotFound(err), "%v", err)
}

// placements are a tenant's namespaces with their shards, as control's
// operator API lists them.
func placements(t *testing.T, d *devServer, tid string) []wire.NamespacePlacement {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx(t), http.MethodGet, d.control+"/control/v1/tenants/"+tid+"/namespaces", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+d.operatorKey)
	resp, err := d.ops.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var out struct {
		Namespaces []wire.NamespacePlacement `json:"namespaces"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
	return out.Namespaces
}

// hostedConfig is a jobbie dev with a tunnel listener on ports[0:4] in
// dir, with flags added.
func hostedConfig(dir string, ports []string, flags ...string) devproc.Config {
	return devproc.Config{Dir: filepath.Join(dir, "hosted"), Log: filepath.Join(dir, "dev.log"),
		Addr: ports[0], ControlAddr: ports[1], ShardAddr: ports[2], TunnelAddr: ports[3], Flags: flags}
}

// startHosted runs hostedConfig's jobbie dev.
func startHosted(t *testing.T, dir string, ports []string) *devServer {
	t.Helper()
	hosted, err := startDev(hostedConfig(dir, ports))
	require.NoError(t, err)
	t.Cleanup(hosted.stop)
	return hosted
}

// selfHostedArgs are the `jobbie shard` arguments of self-hosted node id,
// the i-th of its cluster, joining with token at hosted: its data in
// dir/selfhosted-<id>, its HTTP, Raft and gossip addresses ports[4+3i:]
// on 127.0.0.2. The first starts the group, the others join it.
func selfHostedArgs(hosted *devServer, dir string, ports []string, i int, id, gossipKey, token string) []string {
	p := ports[4+3*i:]
	args := []string{"shard", "--node-id", id, "--data-dir", filepath.Join(dir, "selfhosted-"+id),
		"--http", other(p[0]), "--raft", other(p[1]), "--gossip", other(p[2]), "--gossip-key-file", gossipKey,
		"--join-token", token, "--control-url", hosted.control, "--ca-file", filepath.Join(hosted.dir, "pki", "ca.crt")}
	if i == 0 {
		return append(args, "--bootstrap")
	}
	return append(args, "--join", other(ports[6]), "--join-http", other(ports[4]))
}

// other is addr on 127.0.0.2: the self-hosted nodes' own address, which
// the hosted processes are never told.
func other(addr string) string { return strings.Replace(addr, "127.0.0.1", "127.0.0.2", 1) }

// A three-node self-hosted shard: one token joins the three nodes, which
// form their Raft group in their own network; the gateway reaches them
// through their tunnels, and a write to any of them reaches the leader.
func TestSelfHostedThreeNodeShard(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ports, err := freeport.Loopback(13)
	require.NoError(t, err)
	hosted := startHosted(t, dir, ports)
	a, ta := hosted.tenant(t)
	tok, err := a.CreateJoinToken(ctx(t), "dc3", 10*time.Minute, 3)
	require.NoError(t, err)
	gk := filepath.Join(dir, "gossip.key")
	writeGossipKey(t, gk)
	nodes := map[string]*devproc.Proc{}
	for i, id := range []string{"n1", "n2", "n3"} {
		nodes[id] = startProcess(t, filepath.Join(dir, "selfhosted-"+id+".log"), selfHostedArgs(hosted, dir, ports, i, id, gk, tok.Token)...)
		eventually(t, 60*time.Second, func() bool { return nodes[id].Count("serving https://") > 0 }, id+" serves")
	}
	eventually(t, 60*time.Second, func() bool {
		shards, err := a.Shards(ctx(t))
		require.NoError(t, err)
		return len(shards) == 1 && len(shards[0].Connected) == 3
	}, "three tunnels up")
	var health *wire.ClusterHealth
	eventually(t, 60*time.Second, func() bool {
		shards, err := a.Shards(ctx(t))
		require.NoError(t, err)
		health = shards[0].Health
		return health != nil && health.Healthy && len(health.Nodes) == 3
	}, "the shard's health lists its three nodes")
	require.Equal(t, tok.ShardID, health.ShardID)
	require.NotEmpty(t, health.LeaderID)
	for i, id := range []string{"n1", "n2", "n3"} {
		require.Equal(t, id, health.Nodes[i].ID)
	}

	_, err = a.CreateNamespaceOn(ctx(t), "onprem", tok.ShardID)
	require.NoError(t, err)
	onprem := client.New(hosted.gateway, ta.OwnerKey, client.WithNamespace("onprem"))
	var ids []string
	eventually(t, 30*time.Second, func() bool {
		res, err := onprem.Enqueue(ctx(t), client.EnqueueRequest{Queue: "local", Payload: map[string]int{"n": len(ids)}})
		if err == nil {
			ids = append(ids, res.JobID)
		}
		return len(ids) == 20
	}, "twenty enqueues through the tunnels")
	for range ids {
		j, err := onprem.Fetch(ctx(t), client.FetchRequest{Queues: []string{"local"}, WorkerID: "w1", Timeout: 5 * time.Second})
		require.NoError(t, err)
		require.NotNil(t, j)
		require.NoError(t, onprem.Ack(ctx(t), j.ID, nil))
	}
	for _, id := range ids {
		d, err := onprem.GetJob(ctx(t), id)
		require.NoError(t, err)
		require.Equal(t, "completed", d.State)
	}

	// A node lost (n1, which bootstrapped the group): the other two keep
	// serving through their tunnels, their group electing a leader.
	require.NoError(t, nodes["n1"].Cmd.Process.Kill())
	<-nodes["n1"].Exited()
	var more []string
	eventually(t, 60*time.Second, func() bool {
		res, err := onprem.Enqueue(ctx(t), client.EnqueueRequest{Queue: "after", Payload: map[string]int{"n": len(more)}})
		if err == nil {
			more = append(more, res.JobID)
		}
		return len(more) == 5
	}, "enqueues after losing a node")
	for range more {
		j, err := onprem.Fetch(ctx(t), client.FetchRequest{Queues: []string{"after"}, WorkerID: "w1", Timeout: 5 * time.Second})
		require.NoError(t, err)
		require.NotNil(t, j)
		require.NoError(t, onprem.Ack(ctx(t), j.ID, nil))
	}
	d, err := onprem.GetJob(ctx(t), ids[0])
	require.NoError(t, err)
	require.Equal(t, "completed", d.State, "what the lost node's group acknowledged survives")
}

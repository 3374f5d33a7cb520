package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/e2e/internal/devproc"
	"github.com/jobbie/jobbie/e2e/internal/freeport"
	"github.com/jobbie/jobbie/tenancy"
)

// A self-hosted node lost with its volume is replaced the way its tenant
// does it: the owner removes it from the shard through the hosted
// gateway and mints a token for one more node of the same shard (an
// admin key may do neither); the tenant takes it out of the shard's Raft
// group with `jobbie shard remove` and a surviving node's own
// credentials (it holds no operator certificate); the replacement joins
// the group under a new id, tunnels to the gateway and serves the
// namespace with what the group held.
func TestSelfHostedNodeReplaced(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ports, err := freeport.Loopback(16)
	require.NoError(t, err)
	hosted := startHosted(t, dir, ports)
	a, ta := hosted.tenant(t)
	tok, err := a.CreateJoinToken(ctx(t), "dc3", 10*time.Minute, 3)
	require.NoError(t, err)
	gk := filepath.Join(dir, "gossip.key")
	writeGossipKey(t, gk)
	procs := map[string]*devproc.Proc{}
	dataDir := func(id string) string { return filepath.Join(dir, "selfhosted-"+id) }
	start := func(i int, id, token string) {
		procs[id] = startProcess(t, filepath.Join(dir, "selfhosted-"+id+".log"), selfHostedArgs(hosted, dir, ports, i, id, gk, token)...)
		eventually(t, 60*time.Second, func() bool { return procs[id].Count("serving https://") > 0 }, id+" serves")
	}
	for i, id := range []string{"n1", "n2", "n3"} {
		start(i, id, tok.Token)
	}
	_, err = a.CreateNamespaceOn(ctx(t), "onprem", tok.ShardID)
	require.NoError(t, err)
	onprem := client.New(hosted.gateway, ta.OwnerKey, client.WithNamespace("onprem"))
	var first *client.EnqueueResult
	eventually(t, 60*time.Second, func() bool {
		first, err = onprem.Enqueue(ctx(t), client.EnqueueRequest{Queue: "q", Payload: map[string]int{"n": 1}})
		return err == nil
	}, "an enqueue through the tunnels")

	// n3 is lost, volume and all.
	require.NoError(t, procs["n3"].Cmd.Process.Kill())
	<-procs["n3"].Exited()
	require.NoError(t, os.RemoveAll(dataDir("n3")))

	// Only the owner removes a node or mints a token for more.
	admin, err := a.CreateKey(ctx(t), client.CreateKeyRequest{Name: "ops", Role: tenancy.RoleAdmin, Namespaces: []string{"*"}})
	require.NoError(t, err)
	ac := client.New(hosted.gateway, admin.Token)
	require.True(t, client.IsForbidden(ac.RemoveShardNode(ctx(t), tok.ShardID, "n3")))
	_, err = ac.AddShardNodes(ctx(t), tok.ShardID, 1, 10*time.Minute)
	require.True(t, client.IsForbidden(err), "%v", err)

	require.NoError(t, a.RemoveShardNode(ctx(t), tok.ShardID, "n3"))
	more, err := a.AddShardNodes(ctx(t), tok.ShardID, 1, 10*time.Minute)
	require.NoError(t, err)
	require.Equal(t, tok.ShardID, more.ShardID)
	require.Equal(t, 1, more.Nodes)

	start(3, "n4", more.Token)
	eventually(t, 60*time.Second, func() bool {
		shards, err := a.Shards(ctx(t))
		require.NoError(t, err)
		return len(shards) == 1 && len(shards[0].Connected) == 3
	}, "three tunnels up again")
	shards, err := a.Shards(ctx(t))
	require.NoError(t, err)
	require.Equal(t, []string{"n1", "n2", "n4"}, shards[0].Nodes)
	require.Equal(t, 3, shards[0].ExpectedNodes)

	// The tenant takes n3 out of its Raft group with n2's own
	// credentials (its data directory), at n1's listener; then the
	// replacement holds the group's data and serves through its tunnel:
	// with n1 gone too, n2 and n4 are the group's quorum.
	env := withoutJobbieEnv(os.Environ())
	var r cliRun
	eventually(t, 60*time.Second, func() bool {
		r = jobbie(t, env, nil, "shard", "remove", "n3", "--url", other(ports[4]), "--data-dir", dataDir("n2"))
		return r.code == 0
	}, "n3 removed from the shard's Raft group")
	require.Equal(t, "removed n3\n", r.stdout, "%s", r)
	r = jobbie(t, env, nil, "shard", "members", "--url", other(ports[7]), "--data-dir", dataDir("n2"))
	require.Zero(t, r.code, "%s", r)
	for _, n := range []string{"n1", "n2", "n4"} {
		require.Contains(t, r.stdout, n+" ", "%s", r)
	}
	require.NotContains(t, r.stdout, "n3", "%s", r)
	require.NoError(t, procs["n1"].Cmd.Process.Kill())
	<-procs["n1"].Exited()
	var j *client.Job
	eventually(t, 60*time.Second, func() bool {
		j, err = onprem.Fetch(ctx(t), client.FetchRequest{Queues: []string{"q"}, WorkerID: "w1", Timeout: time.Second})
		return err == nil && j != nil
	}, "the job enqueued before the loss, fetched through n2 and n4")
	require.Equal(t, first.JobID, j.ID)
	require.NoError(t, onprem.Ack(ctx(t), j.ID, nil))
}

// withoutJobbieEnv is env without JOBBIE_ variables: the member
// commands take everything from their flags.
func withoutJobbieEnv(env []string) []string {
	var out []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, "JOBBIE_") {
			out = append(out, kv)
		}
	}
	return out
}

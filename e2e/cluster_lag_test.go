package e2e

import (
	"encoding/json"
	"regexp"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/wire"
)

// `jobbie cluster status` through the gateway on a three-node shard of
// real processes: every member with its applied index and a lag near 0;
// a follower frozen with SIGSTOP falls behind by every entry the leader
// commits meanwhile, shown in the LAG column and in -o json, while the
// others keep up; let go (SIGCONT), it catches up.
func TestClusterStatusShowsReplicationLag(t *testing.T) {
	t.Parallel()
	c := launchCluster(t, 1, 3)
	env := cliEnv("", "JOBBIE_URL="+c.gateway, "JOBBIE_KEY="+c.ownerKey)
	status := func() (wire.ClusterHealth, map[string]wire.ClusterNode) {
		t.Helper()
		r := jobbie(t, env, nil, "cluster", "status", "-o", "json")
		var h wire.ClusterHealth
		require.NoError(t, json.Unmarshal([]byte(r.stdout), &h), "%s", r)
		by := map[string]wire.ClusterNode{}
		for _, n := range h.Nodes {
			by[n.ID] = n
		}
		return h, by
	}
	lagOf := func(n wire.ClusterNode) (uint64, bool) {
		if n.Lag == nil || n.AppliedIndex == nil || n.LastIndex == nil {
			return 0, false
		}
		return *n.Lag, true
	}
	const near = 2 // the leader's own loops may write while we look

	var shardID string
	for _, p := range c.procs() {
		if p.Role == "shard" {
			shardID = p.ShardID
		}
	}
	lead, ok := c.leader(shardID, 0, 60*time.Second)
	require.True(t, ok, "no shard leader")
	eventually(t, 60*time.Second, func() bool {
		h, by := status()
		if !h.Healthy || len(by) != 3 || h.LeaderID != lead.NodeID {
			return false
		}
		for _, n := range by {
			if lag, ok := lagOf(n); !ok || lag > near {
				return false
			}
		}
		return true
	}, "three members through the gateway, each with its indexes and a lag near 0")

	var frozen clusterProc
	for _, p := range c.procs() {
		if p.Role == "shard" && p.NodeID != lead.NodeID {
			frozen = p
			break
		}
	}
	require.NoError(t, syscall.Kill(frozen.PID, syscall.SIGSTOP))
	t.Cleanup(func() { _ = syscall.Kill(frozen.PID, syscall.SIGCONT) })
	_, by := status()
	before, _ := lagOf(by[frozen.NodeID])

	owner := client.New(c.gateway, c.ownerKey)
	const writes = 25
	for i := range writes {
		eventually(t, 30*time.Second, func() bool {
			_, err := owner.Enqueue(ctx(t), client.EnqueueRequest{Queue: "lag", Payload: map[string]int{"n": i}})
			return err == nil
		}, "an enqueue with a follower frozen")
	}
	var table string
	row := regexp.MustCompile(`(?m)^` + frozen.NodeID + `\s+follower\s+\S+\s+\d+\s+(\d+)\s`)
	eventually(t, 60*time.Second, func() bool {
		_, by := status()
		for id, n := range by {
			lag, ok := lagOf(n)
			switch {
			case !ok:
				return false
			case id == frozen.NodeID && lag < before+writes:
				return false
			case id != frozen.NodeID && lag > near:
				return false
			}
		}
		r := jobbie(t, env, nil, "cluster", "status")
		table = r.stdout
		m := row.FindStringSubmatch(r.stdout)
		if m == nil {
			return false
		}
		shown, err := strconv.ParseUint(m[1], 10, 64)
		require.NoError(t, err)
		return shown >= before+writes
	}, "the frozen follower's lag grows by every write, in -o json and the LAG column; the others stay near 0")
	t.Logf("with %s frozen:\n%s", frozen.NodeID, table)

	require.NoError(t, syscall.Kill(frozen.PID, syscall.SIGCONT))
	eventually(t, 60*time.Second, func() bool {
		h, by := status()
		lag, ok := lagOf(by[frozen.NodeID])
		return h.Healthy && ok && lag <= near && by[frozen.NodeID].Status == wire.NodeHealthy
	}, "let go, the follower catches up")
}

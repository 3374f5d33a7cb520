package shard

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/pki/pkitest"
)

func TestClusterHealthSingleNode(t *testing.T) {
	t.Parallel()
	b := setup(t)
	r := b.call("GET", "/api/v1/cluster", nil)
	require.Equal(t, 200, r.Status, string(r.Raw))
	require.Equal(t, map[string]any{"shard_id": "s1", "leader_id": "n1", "healthy": true,
		"nodes": []any{map[string]any{"id": "n1", "role": "leader", "status": "healthy"}}}, r.Body)
	require.NotContains(t, string(r.Raw), "127.0.0.1", "no addresses")

	// The /api/v1 caller checks hold for it as for every tenant route.
	require.Equal(t, 403, b.as(pkitest.Metrics).call("GET", "/api/v1/cluster", nil).Status)
	require.Equal(t, 200, b.as(pkitest.Operator).call("GET", "/api/v1/cluster", nil).Status)
}

// health is GET /api/v1/cluster through b, nodes keyed by id.
func health(t *testing.T, b *bundle) (map[string]any, map[string]map[string]any) {
	t.Helper()
	r := b.call("GET", "/api/v1/cluster", nil)
	require.Equal(t, 200, r.Status, string(r.Raw))
	nodes := map[string]map[string]any{}
	var ids []string
	for _, n := range r.Body["nodes"].([]any) {
		m := n.(map[string]any)
		require.Len(t, m, 3, "id, role, status: nothing else")
		nodes[m["id"].(string)] = m
		ids = append(ids, m["id"].(string))
	}
	require.IsIncreasing(t, ids, "sorted by id")
	return r.Body, nodes
}

func TestClusterHealthThreeNodes(t *testing.T) {
	t.Parallel()
	g := newShardGroup(t, 3)
	for _, b := range g.nodes {
		body, nodes := health(t, b)
		require.Equal(t, "n1", body["leader_id"])
		require.Equal(t, true, body["healthy"])
		require.Equal(t, map[string]map[string]any{
			"n1": {"id": "n1", "role": "leader", "status": "healthy"},
			"n2": {"id": "n2", "role": "follower", "status": "healthy"},
			"n3": {"id": "n3", "role": "follower", "status": "healthy"},
		}, nodes, "as %s sees it", b.srv.Status().NodeID)
	}

	// A schedule preview stores nothing; through a follower it answers all the same.
	r := g.nodes[1].call("POST", "/api/v1/schedules/preview", map[string]any{"cron": "@hourly", "count": 3})
	require.Equal(t, 200, r.Status, string(r.Raw))
	require.Len(t, r.Body["next_runs"], 3)

	// n3 goes: unreachable, and 2 of 3 voters are still a quorum.
	require.NoError(t, g.nodes[2].srv.Stop())
	require.NoError(t, g.pools[2].Shutdown())
	// Health is what a node hears now: on a loaded machine a heartbeat or
	// a gossip probe may be late for a moment (even an election may
	// happen), so each node is asked until it settles on the two of three.
	for _, b := range g.nodes[:2] {
		var body map[string]any
		var nodes map[string]map[string]any
		eventually(t, 15*time.Second, func() bool {
			body, nodes = health(t, b)
			return nodes["n3"]["status"] == "unreachable" && body["healthy"] == true &&
				nodes["n1"]["status"] == "healthy" && nodes["n2"]["status"] == "healthy"
		}, "n3 is unreachable, and 2 of 3 are healthy")
		require.Contains(t, []any{"n1", "n2"}, body["leader_id"])
		require.Equal(t, "follower", nodes["n3"]["role"], "still a voter")
	}

	// n2 goes too: the leader alone is no quorum.
	require.NoError(t, g.nodes[1].srv.Stop())
	require.NoError(t, g.pools[1].Shutdown())
	eventually(t, 15*time.Second, func() bool {
		body, nodes := health(t, g.nodes[0])
		return body["healthy"] == false && nodes["n2"]["status"] == "unreachable"
	}, "n1 alone is not healthy")
	_, nodes := health(t, g.nodes[0])
	require.Equal(t, "healthy", nodes["n1"]["status"], "the node answering is reachable")
}

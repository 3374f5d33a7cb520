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
	// The new leader's own loops write a few entries (their start
	// commands), so an entry may be committed and not yet applied when
	// the health is read: the lag (the commit index beyond the applied
	// one) drains to 0 once the loops wrote theirs.
	var r resp
	var n1 map[string]any
	require.Eventually(t, func() bool {
		r = b.call("GET", "/api/v1/cluster", nil)
		if r.Status != 200 {
			return false
		}
		n1 = r.Body["nodes"].([]any)[0].(map[string]any)
		return n1["lag"] == 0.0
	}, 30*time.Second, 20*time.Millisecond, "the lag drains to 0 once nothing more is written")
	require.NotNil(t, n1["applied_index"], "the node's own applied index")
	applied := n1["applied_index"]
	require.Equal(t, map[string]any{"shard_id": "s1", "leader_id": "n1", "healthy": true,
		"nodes": []any{map[string]any{"id": "n1", "role": "leader", "status": "healthy",
			"applied_index": applied, "last_index": n1["last_index"], "lag": n1["lag"]}}}, r.Body,
		"no contact time on the leader")
	require.GreaterOrEqual(t, n1["last_index"], applied)
	require.NotContains(t, string(r.Raw), "127.0.0.1", "no addresses")

	// The /api/v1 caller checks hold for it as for every tenant route.
	require.Equal(t, 403, b.as(pkitest.Metrics).call("GET", "/api/v1/cluster", nil).Status)
	require.Equal(t, 200, b.as(pkitest.Operator).call("GET", "/api/v1/cluster", nil).Status)
}

// health is GET /api/v1/cluster through b, nodes keyed by id, each with
// its id, role and status (replicationFields drops the rest).
func health(t *testing.T, b *bundle) (map[string]any, map[string]map[string]any) {
	t.Helper()
	body, nodes := healthAll(t, b)
	for _, m := range nodes {
		for _, k := range replicationFields {
			delete(m, k)
		}
		require.Len(t, m, 3, "id, role, status: nothing else")
	}
	return body, nodes
}

// replicationFields are a node's figures of replication in the health.
var replicationFields = []string{"applied_index", "last_index", "lag", "since_contact_ms"}

// healthAll is GET /api/v1/cluster through b, nodes keyed by id.
func healthAll(t *testing.T, b *bundle) (map[string]any, map[string]map[string]any) {
	t.Helper()
	r := b.call("GET", "/api/v1/cluster", nil)
	require.Equal(t, 200, r.Status, string(r.Raw))
	nodes := map[string]map[string]any{}
	var ids []string
	for _, n := range r.Body["nodes"].([]any) {
		m := n.(map[string]any)
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

func TestClusterHealthLag(t *testing.T) {
	t.Parallel()
	g := newShardGroup(t, 3)
	leader, _ := g.leaderAndFollower()
	var stopped *bundle
	var pool int
	for i, b := range g.nodes {
		if b != leader && stopped == nil {
			stopped, pool = b, i
		}
	}
	stoppedID := stopped.srv.Status().NodeID
	for i := range 5 {
		leader.enqueue(map[string]any{"queue": "lag", "payload": map[string]int{"n": i}})
	}
	// Every member catches up: each reports its indexes, none lags by
	// more than what the leader's own loops may be writing, and each
	// follower heard from the leader a moment ago.
	eventually(t, 15*time.Second, func() bool {
		_, nodes := healthAll(t, leader)
		for id, n := range nodes {
			lag, ok := n["lag"].(float64)
			if !ok || lag > 2 || n["applied_index"] == nil || n["last_index"] == nil {
				return false
			}
			if _, ok := n["since_contact_ms"]; ok == (n["role"] == "leader") {
				return false
			}
			require.GreaterOrEqual(t, n["last_index"], n["applied_index"], id)
		}
		return len(nodes) == 3
	}, "every member caught up, each with its figures")

	// A follower stops: it applies nothing more, so its lag grows with
	// every entry the leader commits, while the others keep up.
	require.NoError(t, stopped.srv.Stop())
	require.NoError(t, g.pools[pool].Shutdown())
	var before, contact float64
	eventually(t, 15*time.Second, func() bool {
		_, nodes := healthAll(t, leader)
		n := nodes[stoppedID]
		lag, _ := n["lag"].(float64)
		before = lag
		contact, _ = n["since_contact_ms"].(float64)
		return n["status"] == "unreachable" && n["applied_index"] != nil && n["since_contact_ms"] != nil
	}, "the stopped follower is unreachable; its last indexes and the leader's last contact stay")
	const writes = 20
	for i := range writes {
		r := retry(t, leader, "POST", "/api/v1/enqueue", map[string]any{"queue": "lag", "payload": map[string]int{"after": i}})
		created(t, r)
	}
	eventually(t, 15*time.Second, func() bool {
		_, nodes := healthAll(t, leader)
		for id, n := range nodes {
			lag, ok := n["lag"].(float64)
			if !ok {
				return false
			}
			if id == stoppedID {
				since, _ := n["since_contact_ms"].(float64)
				if lag < before+writes || since <= contact {
					return false
				}
			} else if lag > 2 {
				return false
			}
		}
		return true
	}, "the stopped follower's lag and time since contact grow; the others stay near 0")
}

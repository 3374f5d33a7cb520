package control

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/control/leader"
	"github.com/jobbie/jobbie/internal/pki/pkitest"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// handOver makes leader id give its lead to another node and returns the
// new leader's id.
func (g *group) handOver(t *testing.T, id string) string {
	t.Helper()
	// A transfer can fail under load (the chosen follower did not catch
	// up in time): try again a few times. The node is released before
	// any assertion, or the cleanup's Stop would wait on it forever.
	var terr error
	for range 5 {
		node, release, err := g.nodes[id].Acquire()
		require.NoError(t, err)
		terr = node.TransferLeadership()
		release()
		if terr == nil {
			break
		}
	}
	require.NoError(t, terr)
	return g.leader(t, id)
}

// In a 3-node group, a move asked of a follower runs on the leader. When
// the lead changes before the switch, the new leader fails the move as
// interrupted and cleans up (fence lifted, target aborted), placement
// unchanged; when it changes after the switch, the new leader finishes
// the move on the source and completes it.
func TestGroupMoveAcrossLeaderChanges(t *testing.T) {
	t.Parallel()
	g := startGroup(t, 0)
	src := newFakeMoveShard(t, g.ca, pkitest.Shard("s2", "n1"))
	dst := newFakeMoveShard(t, g.ca, pkitest.Shard("s1", "n1"))
	opts := func(c *Config) {
		c.Shards = []ShardInfo{{ID: "s1", Addr: "https://" + dst.addr}, {ID: "s2", Addr: "https://" + src.addr}}
		c.PullInterval = -1
		c.BackupOrphanAfter = 300 * time.Millisecond
	}
	for _, id := range []string{"control1", "control2", "control3"} {
		g.add(t, id, opts)
	}
	first := g.leader(t, "")
	ctx := context.Background()
	tid := tenantThrough(t, g.on(t, first, pkitest.Operator), "acme")
	ns, err := g.nodes[first].CreateNamespace(ctx, tid, "orders")
	require.NoError(t, err)
	require.Equal(t, "s2", ns.ShardID)
	sns := tenancy.ShardNamespace(tid, "orders")
	src.set(sns, keys(20, "v0"))
	follower := "control1"
	if follower == first {
		follower = "control2"
	}
	move := func(on string) wire.Move {
		t.Helper()
		b := g.on(t, on, pkitest.Operator)
		r := b.do(t, http.MethodPost, "/control/v1/namespaces/"+tid+"/orders/move", b.op, wire.NamespaceMoveRequest{ToShard: "s1"})
		require.Equal(t, http.StatusAccepted, r.status, "body: %s", r.body)
		return decodeAs[wire.Move](t, r)
	}
	await := func(id string, cond func(wire.Move) bool) wire.Move {
		t.Helper()
		var m wire.Move
		require.Eventually(t, func() bool {
			for _, n := range g.nodes {
				if n.IsLeader() {
					got, err := n.Move(ctx, id)
					m = got
					return err == nil && cond(m)
				}
			}
			return false
		}, 30*time.Second, 20*time.Millisecond)
		return m
	}
	placed := func(on string) string {
		t.Helper()
		p, err := g.nodes[on].Namespace(ctx, tid, "orders")
		require.NoError(t, err)
		return p.ShardID
	}

	// Before the switch.
	openSnap := src.gate("snapshot")
	m := move(follower)
	awaitStep(t, src, "snapshot")
	second := g.handOver(t, first)
	failed := await(m.ID, moveEnded)
	require.Equal(t, wire.MoveFailed, failed.State)
	require.Equal(t, leader.MoveLeaderChanged, failed.Error)
	require.Equal(t, "s2", placed(second))
	require.Contains(t, src.steps(), "unfence")
	require.Contains(t, dst.steps(), "abort")
	_, mark, _, _ := dst.state(sns)
	require.Empty(t, mark)
	openSnap() // the old leader's runner goes on and finds its move over
	require.Len(t, src.get(sns), 20)

	// After the switch.
	openFinish := src.gate("finish")
	m = move(second)
	awaitStep(t, src, "finish")
	require.Equal(t, wire.MoveSwitched, await(m.ID, func(m wire.Move) bool { return true }).State)
	third := g.handOver(t, second)
	require.Equal(t, "s1", placed(third))
	awaitStep(t, src, "finish") // the new leader finishes it
	openFinish()
	done := await(m.ID, moveEnded)
	require.Equal(t, wire.MoveCompleted, done.State, "error: %s", done.Error)
	require.Empty(t, src.get(sns))
	require.Len(t, dst.get(sns), 20)
	for id := range g.nodes {
		require.Eventually(t, func() bool { return placed(id) == "s1" }, 10*time.Second, 10*time.Millisecond, id)
	}
}

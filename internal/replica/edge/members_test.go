package edge_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/pki/pkitest"
	"github.com/jobbie/jobbie/internal/replica/edge"
	"github.com/jobbie/jobbie/wire"
)

// The members API: lists and status answered by the node asked, changes
// forwarded to the leader, and the replica's membership errors mapped.
func TestMembershipAPI(t *testing.T) {
	t.Parallel()
	c, leader, follower := setup(t)
	m := pkitest.Control

	r := c.call(follower, m, "GET", "/internal/v1/members", "")
	require.Equal(t, 200, r.status, "body: %s", r.body)
	list := decode[wire.MemberList](t, r)
	require.Equal(t, "n1", list.LeaderID)
	require.Len(t, list.Members, 2)
	for _, mm := range list.Members {
		require.Equal(t, c.nodes[mm.NodeID].addr, mm.HTTPAddr, mm.NodeID)
		require.Equal(t, mm.NodeID == "n1", mm.Leader)
	}
	r = c.call(follower, m, "GET", "/internal/v1/status", "")
	require.Equal(t, 200, r.status, "body: %s", r.body)
	st := decode[edge.NodeStatus](t, r)
	require.Equal(t, "follower", st.State)
	require.Equal(t, follower.addr, st.HTTPAddr)
	require.Equal(t, leader.addr, st.LeaderHTTP)
	_, hasShard := r.json(t)["shard_id"]
	require.False(t, hasShard, "no shard id in a group that is no shard's")

	require.Equal(t, 403, c.call(follower, pkitest.Gateway, "GET", "/internal/v1/members", "").status, "only members")
	for body, want := range map[string]struct {
		status int
		code   string
	}{
		`{"raft_addr":"127.0.0.1:1"}`:                                   {400, "bad_request"}, // CheckAdd
		`{"node_id":"n9","raft_addr":"` + leader.node.RaftAddr() + `"}`: {409, "conflict"},
		`{"node_id":"n9","oops":1}`:                                     {400, "bad_request"},
	} {
		r = c.call(follower, m, "POST", "/internal/v1/members", body)
		require.Equal(t, want.status, r.status, "%s: %s", body, r.body)
		require.Equal(t, want.code, string(r.errorOf(t).Code), body)
	}
	r = c.call(follower, m, "DELETE", "/internal/v1/members/n9", "")
	require.Equal(t, 404, r.status, "body: %s", r.body)
	require.Equal(t, "not_found", string(r.errorOf(t).Code))
}

// A fresh node joins through any member (a follower forwards the add),
// and a removed one learns it from the leader.
func TestJoinAndRemoval(t *testing.T) {
	t.Parallel()
	c, leader, follower := setup(t)
	late := c.start("n3", false)
	require.NoError(t, late.join(20*time.Second, "https://"+late.addr, follower.addr+"/"), "its own address aside")
	waitFor(t, late.node, func() bool { return late.node.LeaderID() == "n1" })
	peers := []edge.Peer{{NodeID: "n3", HTTPAddr: late.addr}, {NodeID: "n2", HTTPAddr: follower.addr}, {NodeID: "n1", HTTPAddr: leader.addr}}
	require.False(t, late.group.Removed(peers))

	ans := c.call(follower, pkitest.Control, "DELETE", "/internal/v1/members/n3", "")
	require.Equal(t, 204, ans.status, "body: %s", ans.body)
	require.True(t, late.group.Removed(peers), "the leader lists it no more")
	// A node that knows a leader is in already.
	require.NoError(t, leader.join(time.Second, "127.0.0.1:1"))
}

// A join that no member answers gives up when its context ends, naming
// the group.
func TestJoinGivesUp(t *testing.T) {
	t.Parallel()
	c, _, _ := setup(t)
	err := c.start("n3", false).join(100 * time.Millisecond)
	require.ErrorContains(t, err, "test: join the test group: context deadline exceeded (last: no member of the test group is known yet)")
}

func decode[T any](t *testing.T, a answer) T {
	t.Helper()
	var v T
	require.NoError(t, jsonUnmarshal(a.body, &v), "body: %s", a.body)
	return v
}

// join asks the members at targets to add m, for up to wait.
func (m *member) join(wait time.Duration, targets ...string) error {
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	return m.group.Join(ctx, wire.AddMemberRequest{NodeID: m.id, RaftAddr: m.node.RaftAddr()}, func() []string { return targets })
}

func TestHostPort(t *testing.T) {
	t.Parallel()
	for a, ok := range map[string]bool{"127.0.0.1:7000": true, "[::1]:7000": true, "node-1.internal:1": true,
		"nope": false, ":7000": false, "[]:7000": false, "127.0.0.1:": false, "127.0.0.1:0": false} {
		require.Equal(t, ok, edge.HostPort(a), a)
	}
}

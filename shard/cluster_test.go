package shard

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/gossip"
	"github.com/jobbie/jobbie/internal/pki/pkitest"
	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/wire"
)

// shardGroup is an in-process shard cluster: real Raft on loopback, one
// gossip pool per node (as one per process), tight timings.
type shardGroup struct {
	t     *testing.T
	base  string
	opts  []func(*Config)
	nodes []*bundle
	pools []*gossip.Pool
}

// newShardGroup starts a group of size nodes, n1 leading; opts change
// each node's configuration (its NodeID is set).
func newShardGroup(t *testing.T, size int, opts ...func(*Config)) *shardGroup {
	t.Helper()
	g := &shardGroup{t: t, base: t.TempDir(), opts: opts} // the directory before the stop cleanups: they run first
	g.grow(size)
	return g
}

// grow starts nodes until the group has size, each joining through
// gossip, and waits until the group formed with n1 leading.
func (g *shardGroup) grow(size int) {
	t := g.t
	t.Helper()
	for i := len(g.nodes); i < size; i++ {
		id := fmt.Sprintf("n%d", i+1)
		var join []string
		if i > 0 {
			join = []string{g.pools[0].Addr()}
		}
		pool, err := gossip.New(gossip.Config{NodeName: "shard-s1-" + id, BindAddr: "127.0.0.1:0", Join: join, Fast: true, Keys: [][]byte{pkitest.GossipKey},
			Meta: gossip.Meta{Role: gossip.RoleShard, ShardID: "s1", NodeID: id}})
		require.NoError(t, err)
		g.pools = append(g.pools, pool)
		cfg := Config{DataDir: filepath.Join(g.base, id), NodeID: id, HTTPAddr: "127.0.0.1:0", Bootstrap: i == 0,
			TLS: nodeCreds(t, id), SweepInterval: 20 * time.Millisecond, Gossip: pool,
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
		for _, o := range g.opts {
			o(&cfg)
		}
		srv, err := New(cfg)
		require.NoError(t, err)
		require.NoError(t, srv.Start())
		t.Cleanup(func() { _ = srv.Stop(); _ = pool.Shutdown() })
		b := newBundle(t, srv, cfg.DataDir)
		g.nodes = append(g.nodes, b)
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		if i == 0 {
			require.NoError(t, srv.WaitLeader(ctx))
		} else {
			require.False(t, srv.HasState())
			require.NoError(t, srv.JoinCluster(ctx, nil), "joins through gossip alone")
		}
		cancel()
	}
	// The default Raft timeouts (500 ms): with shorter ones a loaded
	// machine (make test runs packages side by side) elected again while
	// the group formed, and the tests below start from n1 leading. Even
	// these may elect another node under load: the node that leads then
	// hands the lead back to n1, as an operator would.
	eventually(t, 20*time.Second, func() bool {
		for _, b := range g.nodes[1:] {
			if b.srv.IsLeader() {
				first := g.nodes[0].srv
				_ = b.srv.repl.Raft().LeadershipTransferToServer(raft.ServerID(first.cfg.NodeID), raft.ServerAddress(first.repl.RaftAddr())).Error()
			}
		}
		for _, b := range g.nodes {
			st := b.srv.Status()
			ms, err := b.srv.Members()
			if st.LeaderHTTP != g.nodes[0].srv.Addr() || err != nil || len(ms) != size {
				return false
			}
		}
		return true
	}, "every node knows the leader's HTTP address and every member")
}

// leaderAndFollower waits until every node names the same leader and
// returns it and a follower: a loaded machine may have elected another
// node than the first since the group formed.
func (g *shardGroup) leaderAndFollower() (leader, follower *bundle) {
	g.t.Helper()
	eventually(g.t, 20*time.Second, func() bool {
		leader, follower = nil, nil
		addr := g.nodes[0].srv.Status().LeaderHTTP
		for _, b := range g.nodes {
			if addr == "" || b.srv.Status().LeaderHTTP != addr {
				return false
			}
			if b.srv.Addr() == addr {
				leader = b
			} else if follower == nil {
				follower = b
			}
		}
		return leader != nil && leader.srv.IsLeader()
	}, "every node names one leader")
	return leader, follower
}

// leaderAndRest is the node that leads (a loaded machine may have
// elected another than the first) and the others.
func (g *shardGroup) leaderAndRest() (leader *bundle, rest []*bundle) {
	leader, _ = g.leaderAndFollower()
	for _, n := range g.nodes {
		if n != leader {
			rest = append(rest, n)
		}
	}
	return leader, rest
}

// killLeader stops the node that leads and waits until another leads;
// it returns the others.
func (g *shardGroup) killLeader() []*bundle {
	g.t.Helper()
	leader, rest := g.leaderAndRest()
	require.NoError(g.t, leader.srv.Stop())
	eventually(g.t, 20*time.Second, func() bool { return rest[0].srv.IsLeader() || rest[1].srv.IsLeader() }, "a new leader")
	return rest
}

// retry repeats a call while its 503 (an election under a loaded test
// machine) says it may be sent again, as a real caller would, and
// returns the first other answer. A 503 no_leader proposed nothing: any
// call goes again, as the gateway's shard client sends it. Any other 503
// may have been applied (the leader changed while it was replicated):
// only a read goes again, and a creating POST, which retry sends with one
// Idempotency-Key throughout, as the client does, so that a second send
// gets the first's answer (200, Idempotency-Replayed; see created); any
// other write's answer is the caller's.
func retry(t *testing.T, b *bundle, method, path string, body any, headers ...string) resp {
	t.Helper()
	keyed := method == "POST" && wire.IdempotentRoutes[path]
	if keyed {
		headers = append([]string{wire.IdempotencyKeyHeader, "retry-" + strconv.FormatUint(retryKeys.Add(1), 10)}, headers...)
	}
	var r resp
	eventually(t, 10*time.Second, func() bool {
		r = b.call(method, path, body, headers...)
		return r.Status != 503 || (errCode(r) != "no_leader" && method != "GET" && !keyed)
	}, method+" "+path+" answered 503 throughout")
	return r
}

// retryKeys numbers the Idempotency-Keys retry sends: one per call.
var retryKeys atomic.Uint64

// created requires r to answer a creating POST that retry sent: 201, or
// the first send's answer given back to a second (200, replayed).
func created(t *testing.T, r resp) resp {
	t.Helper()
	if r.Header.Get(wire.IdempotencyReplayedHeader) != "true" {
		require.Equal(t, 201, r.Status, string(r.Raw))
	}
	return r
}

func TestClusterForwardsWritesAndReadsLocally(t *testing.T) {
	t.Parallel()
	g := newShardGroup(t, 3)
	leader, follower := g.leaderAndFollower()
	require.True(t, leader.srv.IsLeader())
	require.False(t, follower.srv.IsLeader())

	// A write through a follower is forwarded; the follower then has it.
	r := retry(t, follower, "POST", "/api/v1/enqueue", map[string]any{"queue": "fw", "payload": map[string]int{"n": 1}})
	created(t, r)
	id := r.Body["job_id"].(string)
	require.Equal(t, "pending", follower.job(id)["state"], "read your write through the same follower")
	eventually(t, 5*time.Second, func() bool { return g.nodes[2].call("GET", "/api/v1/jobs/"+id, nil).Status == 200 }, "replicated")

	// A long-poll fetch through a follower waits at the leader and gets
	// the job; the ack, forwarded too, completes it.
	r = retry(t, follower, "POST", "/api/v1/fetch", map[string]any{"queues": []string{"fw"}, "worker_id": "w1", "timeout": 2})
	require.Equal(t, 200, r.Status, string(r.Raw))
	require.Equal(t, id, r.Body["job_id"])
	r = retry(t, g.nodes[2], "POST", "/api/v1/ack/"+id, map[string]any{"result": map[string]bool{"ok": true}})
	require.Equal(t, 200, r.Status, string(r.Raw))
	require.Equal(t, "completed", g.nodes[2].job(id)["state"])

	// Workers live in the leader's memory: asked anywhere, answered there.
	r = follower.call("GET", "/api/v1/workers", nil)
	require.Equal(t, 200, r.Status)
	require.Contains(t, string(r.Raw), `"w1"`)

	// Errors come back unchanged.
	r = retry(t, follower, "POST", "/api/v1/enqueue", map[string]any{"queue": ""})
	require.Equal(t, 400, r.Status, string(r.Raw))
	require.Equal(t, "bad_request", errCode(r))

	// A follower is ready: it knows a leader and has caught up.
	require.Equal(t, 200, follower.call("GET", "/readyz", nil).Status)
}

func TestClusterForwardsOnlyOnce(t *testing.T) {
	t.Parallel()
	g := newShardGroup(t, 2)
	r := g.nodes[1].call("POST", "/api/v1/enqueue", map[string]any{"queue": "q"}, wire.ForwardedHeader, "n9")
	require.Equal(t, 503, r.Status, string(r.Raw))
	require.Equal(t, "no_leader", errCode(r))
	require.Equal(t, "1", r.Header.Get("Retry-After"))
	require.Equal(t, g.nodes[0].srv.Addr(), r.Header.Get(wire.LeaderHeader), "names the leader for the caller to retry")

	// At the leader a forwarded request is served and reports the index.
	r = g.nodes[0].call("POST", "/api/v1/enqueue", map[string]any{"queue": "q"}, wire.ForwardedHeader, "n2")
	require.Equal(t, 201, r.Status, string(r.Raw))
	require.NotEmpty(t, r.Header.Get(wire.AppliedHeader))
}

func TestClusterGossipMetaFollowsLeadership(t *testing.T) {
	t.Parallel()
	g := newShardGroup(t, 3)
	// The leader as the group has it now (a loaded machine may move the
	// lead after forming): gossip and every node name it.
	var leader *bundle
	var li int
	eventually(t, 20*time.Second, func() bool {
		leader, _ = g.leaderAndFollower()
		li = slices.Index(g.nodes, leader)
		m, ok := g.pools[(li+1)%3].Leader("s1")
		if !ok || m.Inferred || m.Meta.NodeID != leader.srv.cfg.NodeID || m.Meta.HTTPAddr != leader.srv.Addr() {
			return false
		}
		for _, p := range g.pools {
			if p.Meta().LeaderHTTP != leader.srv.Addr() {
				return false
			}
		}
		return true
	}, "gossip and every node name the leader")
	leaderHTTP := leader.srv.Addr()
	for i, p := range g.pools {
		m := p.Meta()
		require.Equal(t, gossip.RoleShard, m.Role)
		require.Equal(t, g.nodes[i].srv.Addr(), m.HTTPAddr)
		require.Equal(t, leaderHTTP, m.LeaderHTTP)
		require.NotEmpty(t, m.RaftAddr)
		require.NotZero(t, m.Term)
		require.Equal(t, replica.EntryFormat, m.EntryFormat, "each node says which Raft entries it applies")
	}

	// The leader goes: the others elect one and say so in gossip.
	gone := leader.srv.cfg.NodeID
	require.NoError(t, leader.srv.Stop())
	require.NoError(t, g.pools[li].Shutdown())
	other := g.pools[(li+1)%3]
	eventually(t, 20*time.Second, func() bool {
		m, ok := other.Leader("s1")
		return ok && m.Meta.NodeID != gone && m.Meta.RaftState == gossip.StateLeader
	}, "gossip names the new leader")
	m, _ := other.Leader("s1")
	for _, b := range g.nodes {
		if b == leader {
			continue
		}
		if b.srv.Status().NodeID == m.Meta.NodeID {
			continue
		}
		r := retry(t, b, "POST", "/api/v1/enqueue", map[string]any{"queue": "after"}) // 503 until b hears from the new leader
		created(t, r)
		require.Equal(t, "pending", b.job(r.Body["job_id"].(string))["state"])
	}
}

func TestClusterMembershipAPI(t *testing.T) {
	t.Parallel()
	g := newShardGroup(t, 3)
	follower := g.nodes[2].as(pkitest.Operator)
	r := follower.call("GET", "/internal/v1/members", nil)
	require.Equal(t, 200, r.Status, string(r.Raw))
	require.Equal(t, "n1", r.Body["leader_id"])
	ms := r.Body["members"].([]any)
	require.Len(t, ms, 3)
	for _, m := range ms {
		mm := m.(map[string]any)
		require.NotEmpty(t, mm["http_addr"], mm)
		require.Equal(t, true, mm["voter"])
	}

	for body, field := range map[string]string{`{"raft_addr":"127.0.0.1:1"}`: "node_id", `{"node_id":"n9","raft_addr":"nope"}`: "raft_addr",
		`{"node_id":"a b","raft_addr":"127.0.0.1:1"}`: "node_id"} {
		r = retry(t, follower, "POST", "/internal/v1/members", body)
		require.Equal(t, 400, r.Status, body)
		require.Equal(t, field, errField(r))
	}
	r = retry(t, follower, "POST", "/internal/v1/members", `{"node_id":"n9","raft_addr":"`+g.nodes[1].srv.repl.RaftAddr()+`"}`)
	require.Equal(t, 409, r.Status, "an address already in use")
	require.Equal(t, 404, retry(t, follower, "DELETE", "/internal/v1/members/n9", nil).Status)
	require.Equal(t, 403, g.nodes[2].call("GET", "/internal/v1/members", nil).Status, "a gateway does not manage members")
	require.Equal(t, 200, g.nodes[2].as(pkitest.Shard("s1", "n1")).call("GET", "/internal/v1/members", nil).Status, "a member does")

	// Removed through a follower (forwarded to the leader).
	r = retry(t, follower, "DELETE", "/internal/v1/members/n2", nil)
	require.Equal(t, 204, r.Status, string(r.Raw))
	eventually(t, 5*time.Second, func() bool {
		ms, err := follower.srv.Members()
		return err == nil && len(ms) == 2
	}, "n2 is gone")

	r = g.nodes[0].as(pkitest.Operator).call("POST", "/internal/v1/snapshot", nil)
	require.Equal(t, 200, r.Status, string(r.Raw))
	r = follower.call("GET", "/internal/v1/status", nil)
	require.Equal(t, 200, r.Status)
	require.Equal(t, "follower", r.Body["state"])
	require.Equal(t, "s1", r.Body["shard_id"])
}

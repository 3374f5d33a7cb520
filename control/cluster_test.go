package control

import (
	"context"
	"net/http"
	"sort"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/pki"
	"github.com/jobbie/jobbie/internal/pki/pkitest"
	"github.com/jobbie/jobbie/wire"
)

// group is a control group of real nodes (Raft over mutual TLS, HTTP) in
// this process; every node has its own certificate from one CA.
type group struct {
	ca    *pkitest.CA
	nodes map[string]*Server
	op    string
}

func startGroup(t *testing.T, n int, opts ...func(*Config)) *group {
	t.Helper()
	g := &group{ca: pkitest.New(t), nodes: map[string]*Server{}}
	for i := 1; i <= n; i++ {
		g.add(t, "control"+string(rune('0'+i)), opts...)
	}
	return g
}

// add starts node id: the first bootstraps the group, the others join
// it through control1. It returns once the node serves.
func (g *group) add(t *testing.T, id string, opts ...func(*Config)) *Server {
	t.Helper()
	first := g.nodes["control1"]
	cfg := testConfig(t, g.ca, func(c *Config) {
		c.NodeID = id
		c.TLS = g.ca.Creds(t, pki.Identity{Role: pki.RoleControl, Node: id})
		c.RaftTimeout = 200 * time.Millisecond
		if first != nil {
			c.Join = []string{first.Addr()}
		}
	})
	for _, o := range opts {
		o(&cfg)
	}
	srv, err := New(cfg)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	require.NoError(t, srv.Start(ctx))
	cancel()
	t.Cleanup(func() { _ = srv.Stop() })
	g.nodes[id] = srv
	if first == nil {
		op, err := srv.IssueOperatorKey(context.Background(), "ops")
		require.NoError(t, err)
		g.op = op
	}
	b := g.on(t, id, pkitest.Operator)
	require.Eventually(t, func() bool { return b.do(t, http.MethodGet, "/readyz", "", nil).status == http.StatusOK }, 20*time.Second, 10*time.Millisecond)
	return srv
}

// on is a bundle calling node id as identity who (operator keys need no
// certificate: pass pkitest.Operator).
func (g *group) on(t *testing.T, id string, who pki.Identity) *bundle {
	t.Helper()
	return &bundle{srv: g.nodes[id], ca: g.ca, base: "https://" + g.nodes[id].Addr(), op: g.op,
		client: clientWith(g.ca.Creds(t, who).Client(pki.Roles(pki.RoleControl)))}
}

// settled is do, sent again while the answer is a 503 with Retry-After:
// an election on a loaded machine (the group runs 200 ms Raft timeouts),
// as a caller of a follower would. For requests that may safely be sent
// twice.
func (b *bundle) settled(t *testing.T, method, path, token string, body any) response {
	t.Helper()
	var r response
	require.Eventually(t, func() bool {
		r = b.do(t, method, path, token, body)
		return r.status != http.StatusServiceUnavailable || r.header.Get("Retry-After") == ""
	}, 20*time.Second, 50*time.Millisecond, "%s %s answered 503 throughout", method, path)
	return r
}

// leader waits for a node other than not to lead and returns its id.
func (g *group) leader(t *testing.T, not string) string {
	t.Helper()
	var id string
	require.Eventually(t, func() bool {
		for nid, s := range g.nodes {
			if nid != not && s.IsLeader() {
				id = nid
				return true
			}
		}
		return false
	}, 20*time.Second, 10*time.Millisecond)
	return id
}

// tenantThrough creates tenant name through node b as the operator. A
// 503 with Retry-After is an election: unavailable (the leader changed
// while the create was being replicated) may have applied it, so, as the
// error tells a caller, it looks for the tenant before asking again.
func tenantThrough(t *testing.T, b *bundle, name string) string {
	t.Helper()
	var tid string
	require.Eventually(t, func() bool {
		r := b.do(t, http.MethodPost, "/control/v1/tenants", b.op, map[string]string{"name": name})
		if r.status == http.StatusCreated {
			tid = decodeAs[wire.CreatedTenant](t, r).Tenant.ID
			return true
		}
		require.Equal(t, http.StatusServiceUnavailable, r.status, "body: %s", r.body)
		require.NotEmpty(t, r.header.Get("Retry-After"), "body: %s", r.body)
		list := b.settled(t, http.MethodGet, "/control/v1/tenants", b.op, nil)
		require.Equal(t, http.StatusOK, list.status, "body: %s", list.body)
		for _, tn := range decodeAs[wire.TenantList](t, list).Tenants {
			if tn.Name == name {
				tid = tn.ID
				return true
			}
		}
		return false
	}, 20*time.Second, 50*time.Millisecond, "tenant %s", name)
	return tid
}

// followers are the nodes of g other than lead, in order.
func (g *group) followers(lead string) []string {
	var ids []string
	for id := range g.nodes {
		if id != lead {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	return ids
}

func TestGroupForwardsWritesAndFailsOver(t *testing.T) {
	g := startGroup(t, 3)
	// control1 bootstrapped the group, but an election on a loaded
	// machine may have moved the lead already: the test takes it where
	// it is.
	lead := g.leader(t, "")
	fs := g.followers(lead)

	// A follower forwards the operator's write, and a gateway's and a
	// shard's, each checked at the leader as the identity the follower
	// admitted.
	tid := tenantThrough(t, g.on(t, fs[0], pkitest.Operator), "acme")
	gw3 := g.on(t, fs[1], pkitest.Gateway)
	// A follower serves the revocation list from its own state.
	r := gw3.settled(t, http.MethodGet, "/internal/v1/revocations", "", nil)
	require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)
	postThrough(t, gw3, "/internal/v1/tenants/"+tid+"/keys", "ci", KeyRequest{Name: "ci", Role: "producer", Namespaces: []string{"default"}}, http.StatusCreated)
	r = g.on(t, fs[0], pkitest.Shard("s9", "n1")).settled(t, http.MethodPost, registerPath, "", registration("s9", 5, "https://127.0.0.1:9901"))
	require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)
	// A shard cannot register another shard through a follower either.
	r = g.on(t, fs[1], pkitest.Shard("s8", "n1")).settled(t, http.MethodPost, registerPath, "", registration("s9", 5, "https://127.0.0.1:9901"))
	require.Equal(t, http.StatusForbidden, r.status, "body: %s", r.body)
	// A gateway's certificate is still no operator key, forwarded or not.
	r = gw3.settled(t, http.MethodGet, "/control/v1/tenants", "", nil)
	require.Equal(t, http.StatusUnauthorized, r.status, "body: %s", r.body)
	// Only control nodes and operators see the membership.
	r = gw3.settled(t, http.MethodGet, "/internal/v1/members", "", nil)
	require.Equal(t, http.StatusForbidden, r.status, "body: %s", r.body)
	members := decodeAs[wire.MemberList](t, g.on(t, fs[1], pkitest.Operator).settled(t, http.MethodGet, "/internal/v1/members", "", nil))
	require.Len(t, members.Members, 3)

	// The leader stops: another takes over and writes work on every node
	// still up, from the state the old leader left.
	start := time.Now()
	require.NoError(t, g.nodes[lead].Stop())
	delete(g.nodes, lead)
	next := g.leader(t, lead)
	t.Logf("new leader %s after %s", next, time.Since(start))
	for id := range g.nodes {
		require.Eventually(t, func() bool {
			r := g.on(t, id, pkitest.Gateway).do(t, http.MethodPost, "/internal/v1/tenants/"+tid+"/keys", "",
				KeyRequest{Name: "after-" + id, Role: "producer", Namespaces: []string{"default"}})
			if r.status == http.StatusServiceUnavailable {
				require.NotEmpty(t, r.header.Get("Retry-After"))
				return false
			}
			require.Equal(t, http.StatusCreated, r.status, "body: %s", r.body)
			return true
		}, 20*time.Second, 50*time.Millisecond)
	}
	keys := decodeAs[wire.KeyList](t, g.on(t, next, pkitest.Gateway).settled(t, http.MethodGet, "/internal/v1/tenants/"+tid+"/keys", "", nil))
	// A 503 during the election may come after the leader applied the
	// write (its answer was lost), so a node's key may have been made
	// twice: the names, not the count, say every node wrote.
	names := map[string]bool{}
	for _, k := range keys.Keys {
		names[k.Name] = true
	}
	require.Equal(t, map[string]bool{"owner": true, "ci": true, "after-" + fs[0]: true, "after-" + fs[1]: true}, names,
		"owner, ci and one per node still up")

	// With a single node left there is no majority: writes get 503
	// no_leader with Retry-After, and so does the revocation list, which
	// a node without a leader cannot vouch for.
	var last string
	for id := range g.nodes {
		if id != next {
			last = id
		}
	}
	require.NoError(t, g.nodes[next].Stop())
	delete(g.nodes, next)
	lone := g.on(t, last, pkitest.Gateway)
	require.Eventually(t, func() bool {
		r := lone.do(t, http.MethodPost, "/internal/v1/tenants/"+tid+"/keys", "", KeyRequest{Name: "x", Role: "producer", Namespaces: []string{"default"}})
		return r.status == http.StatusServiceUnavailable && r.header.Get("Retry-After") != ""
	}, 20*time.Second, 50*time.Millisecond)
	require.Eventually(t, func() bool {
		r := lone.do(t, http.MethodGet, "/internal/v1/revocations", "", nil)
		return r.status == http.StatusServiceUnavailable && r.header.Get("Retry-After") != ""
	}, 20*time.Second, 50*time.Millisecond)
}

func TestGroupMemberCatchesUpFromSnapshot(t *testing.T) {
	g := startGroup(t, 1, func(c *Config) { c.TrailingLogs = 1 })
	for i := range 20 {
		_, err := g.nodes["control1"].CreateTenant(context.Background(), "t"+string(rune('a'+i)))
		require.NoError(t, err)
	}
	node, release, err := g.nodes["control1"].Acquire()
	require.NoError(t, err)
	require.NoError(t, node.Snapshot()) // and compact the log behind it
	release()

	// A node added now gets the state as a snapshot, not the log.
	late := g.add(t, "control2")
	st, err := late.Status()
	require.NoError(t, err)
	require.GreaterOrEqual(t, st.Restores, uint64(1), "caught up from a snapshot")
	require.Eventually(t, func() bool {
		list, err := late.Tenants(context.Background())
		return err == nil && len(list) == 20
	}, 10*time.Second, 10*time.Millisecond)
	// And it serves: a write through it reaches the leader.
	tenantThrough(t, g.on(t, "control2", pkitest.Operator), "late")
}

// Only the leader pulls usage; after a leader change the new one resumes
// from the replicated cursor, and the ledger counts nothing twice.
func TestGroupPullsOnTheLeaderAndResumesFromTheCursor(t *testing.T) {
	g := &group{ca: pkitest.New(t), nodes: map[string]*Server{}}
	shard := newFakeUsageShard(t, g.ca, pkitest.Shard("s1", "n1"))
	clock := clockwork.NewFakeClockAt(hourOf(13))
	opts := func(c *Config) {
		c.Shards = []ShardInfo{{ID: "s1", Addr: shard.addr}}
		c.PullInterval = 20 * time.Millisecond
		c.Clock = clock
	}
	for _, id := range []string{"control1", "control2", "control3"} {
		g.add(t, id, opts)
	}
	first := g.leader(t, "")
	tid := tenantThrough(t, g.on(t, first, pkitest.Operator), "acme")
	shard.set(hourOf(11).Add(2*time.Minute), bucket(tid, "default", hourOf(10), runs(2)), bucket(tid, "default", hourOf(11), runs(1)))
	require.Eventually(t, func() bool {
		return usageOf(t, g.nodes[first], tid, "").Totals.Executions == 3 && cursorOf(t, g.nodes[first], "s1").Equal(hourOf(11))
	}, 10*time.Second, 10*time.Millisecond)
	onlyLeaderPulls(t, g, shard)

	require.NoError(t, g.nodes[first].Stop())
	delete(g.nodes, first)
	next := g.leader(t, first)
	// Hour 11 grew from 1 to 5; hour 10 is closed and not read again.
	shard.set(hourOf(11).Add(30*time.Minute), bucket(tid, "default", hourOf(10), runs(2)), bucket(tid, "default", hourOf(11), runs(5)))
	require.Eventually(t, func() bool { return usageOf(t, g.nodes[next], tid, "").Totals.Executions == 7 }, 10*time.Second, 10*time.Millisecond)
	require.True(t, shard.lastSince(t).Equal(hourOf(11)), "the new leader reads from the replicated cursor")
	n := shard.requestCount()
	require.Eventually(t, func() bool { return shard.requestCount() >= n+3 }, 10*time.Second, 10*time.Millisecond)
	require.Equal(t, int64(7), usageOf(t, g.nodes[next], tid, "").Totals.Executions, "pulled again, counted once")
	onlyLeaderPulls(t, g, shard)
}

// onlyLeaderPulls checks that over a few pull rounds in one term only the
// leader read the shard. A loaded machine may see an election meanwhile:
// then it looks again.
func onlyLeaderPulls(t *testing.T, g *group, shard *fakeUsageShard) {
	t.Helper()
	for range 10 {
		id := g.leader(t, "")
		before, err := g.nodes[id].Status()
		require.NoError(t, err)
		shard.forgetCallers()
		n := shard.requestCount()
		require.Eventually(t, func() bool { return shard.requestCount() >= n+3 }, 10*time.Second, 5*time.Millisecond)
		callers := shard.callerIDs()
		after, err := g.nodes[id].Status()
		require.NoError(t, err)
		if after.Term == before.Term && after.State == "leader" {
			require.Equal(t, []string{id}, callers, "only the leader pulls")
			return
		}
	}
	t.Fatal("no term lasted three pull rounds")
}

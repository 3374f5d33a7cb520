package control

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/control/service"
	"github.com/jobbie/jobbie/control/state"
	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/gossip"
	"github.com/jobbie/jobbie/internal/pki"
	"github.com/jobbie/jobbie/internal/pki/pkitest"
	"github.com/jobbie/jobbie/wire"
)

const registerPath = "/control/v1/shards/register"

func registration(id string, capacity uint64, addrs ...string) state.ShardRegistration {
	reg := state.ShardRegistration{ShardID: id, Capacity: capacity, Version: "test"}
	for i, a := range addrs {
		reg.Members = append(reg.Members, state.ShardMember{NodeID: id + "-n" + string(rune('1'+i)), HTTPAddr: a, RaftAddr: "127.0.0.1:1" + string(rune('0'+i))})
	}
	return reg
}

func shardList(t *testing.T, b *bundle) map[string]wire.ShardLoad {
	t.Helper()
	r := b.do(t, http.MethodGet, "/control/v1/shards", b.op, nil)
	require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)
	out := map[string]wire.ShardLoad{}
	for _, s := range decodeAs[struct{ Shards []wire.ShardLoad }](t, r).Shards {
		out[s.ID] = s
	}
	return out
}

func TestHTTPRegisterShardIsListedAndIdempotent(t *testing.T) {
	t.Parallel()
	clock := clockwork.NewFakeClockAt(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	b := setup(t, func(c *Config) { c.Clock = clock })
	s3n1 := b.as(t, pkitest.Shard("s3", "n1"))
	reg := registration("s3", 50, "http://127.0.0.1:9301", "127.0.0.1:9302")
	r := s3n1.do(t, http.MethodPost, registerPath, "", reg)
	require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)
	first := decodeAs[state.RegisteredShard](t, r)
	require.Equal(t, "s3", first.ID)
	require.Equal(t, reg.Members, first.Members)
	require.EqualValues(t, 50, first.Capacity)
	require.Equal(t, first.RegisteredAt, first.LastRegisteredAt)

	list := shardList(t, b)
	require.Len(t, list, 3)
	s3 := list["s3"]
	require.False(t, s3.Static)
	require.Equal(t, "http://127.0.0.1:9301", s3.Addr, "a registered shard's address is its first member's")
	require.Equal(t, reg.Members, s3.Members)
	require.EqualValues(t, 50, s3.Capacity)
	require.Equal(t, "test", s3.Version)
	require.NotNil(t, s3.LastRegisteredAt)
	require.True(t, list["s1"].Static)

	// Re-registering replaces members, capacity and version, keeps the
	// first registration time and moves the last.
	clock.Advance(time.Second) // the leader stamps its clock: a later one
	again := registration("s3", 0, "127.0.0.1:9303")
	again.Version = "v2"
	r = b.as(t, pkitest.Shard("s3", "n2")).do(t, http.MethodPost, registerPath, "", again)
	require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)
	second := decodeAs[state.RegisteredShard](t, r)
	require.Equal(t, first.RegisteredAt, second.RegisteredAt)
	require.True(t, second.LastRegisteredAt.After(first.LastRegisteredAt))
	require.EqualValues(t, service.DefaultShardCapacity, second.Capacity, "no capacity means the default")
	s3 = shardList(t, b)["s3"]
	require.Equal(t, again.Members, s3.Members)
	require.Equal(t, "v2", s3.Version)
	require.Len(t, shardList(t, b), 3, "the same shard, not a second one")
}

func TestHTTPRegisterShardRejectsBadInput(t *testing.T) {
	t.Parallel()
	b := setup(t)
	s3 := b.as(t, pkitest.Shard("s3", "n1"))
	member := `{"node_id":"n1","http_addr":"127.0.0.1:9001"}`
	cases := []struct{ body, field string }{
		{`{"members":[` + member + `]}`, "shard_id"},
		{`{"shard_id":"bad id","members":[` + member + `]}`, "shard_id"},
		{`{"shard_id":"s3"}`, "members"},
		{`{"shard_id":"s3","members":[]}`, "members"},
		{`{"shard_id":"s3","members":[{"http_addr":"127.0.0.1:1"}]}`, "members[0].node_id"},
		{`{"shard_id":"s3","members":[{"node_id":"n1"}]}`, "members[0].http_addr"},
		{`{"shard_id":"s3","members":[{"node_id":"n1","http_addr":"no-port"}]}`, "members[0].http_addr"},
		{`{"shard_id":"s3","members":[{"node_id":"n1","http_addr":"ftp://x:1"}]}`, "members[0].http_addr"},
		{`{"shard_id":"s3","members":[` + member + `,{"node_id":"n2","http_addr":"h:1","raft_addr":"nope"}]}`, "members[1].raft_addr"},
		{`{"shard_id":"s3","members":[` + member + `,` + member + `]}`, "members"},
		{`{"shard_id":"s3","members":[` + member + `],"capacity":-1}`, "capacity"},
		{`{"shard_id":"s3","members":[` + member + `],"capacity":1.5}`, "capacity"},
		{`{"shard_id":"s3","members":[` + member + `],"capacity":"10"}`, "capacity"},
		{`{"shard_id":"s3","members":[` + member + `],"capacity":1000000001}`, "capacity"},
		{`{"shard_id":"s3","members":[` + member + `],"version":"a\nb"}`, "version"},
	}
	for _, tc := range cases {
		requireError(t, s3.do(t, http.MethodPost, registerPath, "", tc.body), 400, "bad_request", tc.field)
	}
	requireError(t, s3.do(t, http.MethodPost, registerPath, "", `{"shard_id":`), 400, "invalid_json")
	requireError(t, s3.do(t, http.MethodPost, registerPath, "", nil), 400, "invalid_json")
	require.Len(t, shardList(t, b), 2, "no bad registration was recorded")
}

// Only a shard's certificate registers, and only for its own shard: none
// is a 401 whatever key comes along, another role's or another shard's a
// 403. A shard's certificate does not read the operator's shard list.
func TestHTTPShardRegistryAuth(t *testing.T) {
	t.Parallel()
	b := setup(t)
	owner := b.newTenant(t, "acme").OwnerKey
	body := registration("s3", 0, "127.0.0.1:9301")
	for _, tok := range []string{"", "not-a-key", b.op, owner} {
		requireError(t, b.do(t, http.MethodPost, registerPath, tok, body), 401, "unauthenticated")
	}
	for _, id := range []pki.Identity{pkitest.Gateway, pkitest.Operator, pkitest.Metrics, pkitest.Control, pkitest.Shard("s1", "n1")} {
		for _, tok := range []string{"", b.op} {
			requireError(t, b.as(t, id).do(t, http.MethodPost, registerPath, tok, body), 403, "forbidden")
		}
	}
	requireError(t, b.do(t, http.MethodGet, "/control/v1/shards", owner, nil), 403, "forbidden")
	requireError(t, b.as(t, pkitest.Shard("s3", "n1")).do(t, http.MethodGet, "/control/v1/shards", "", nil), 401, "unauthenticated")
	require.Len(t, shardList(t, b), 2)
}

func TestRegisteredShardsTakeNewNamespacesByLoad(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *Config) { c.Shards = nil })
	ctx := context.Background()
	_, err := b.srv.CreateTenant(ctx, "early")
	require.Equal(t, apierr.Unavailable, apierr.CodeOf(err), "no shard yet: %v", err)

	_, err = b.srv.RegisterShard(ctx, registration("big", 3, "127.0.0.1:9401", "127.0.0.1:9402"))
	require.NoError(t, err)
	_, err = b.srv.RegisterShard(ctx, registration("small", 1, "127.0.0.1:9501"))
	require.NoError(t, err)

	acme := b.newTenant(t, "acme") // default: big 0/3 ties small 0/1, "big" < "small"
	tid := acme.Tenant.ID
	var placed []string
	for _, name := range []string{"a", "b", "c"} {
		ns, err := b.srv.CreateNamespace(ctx, tid, name)
		require.NoError(t, err)
		placed = append(placed, ns.ShardID)
	}
	// a: big 1/3 vs small 0/1 → small; b: big 1/3 vs small full → big;
	// c: big 2/3, small full → big; then both are full.
	require.Equal(t, []string{"small", "big", "big"}, placed)
	_, err = b.srv.CreateNamespace(ctx, tid, "d")
	require.Equal(t, apierr.Unavailable, apierr.CodeOf(err), "every shard is full: %v", err)

	list := shardList(t, b)
	require.EqualValues(t, 3, list["big"].Namespaces)
	require.EqualValues(t, 1, list["small"].Namespaces)

	// The operator sees each namespace's shard.
	r := b.do(t, http.MethodGet, "/control/v1/tenants/"+tid+"/namespaces", b.op, nil)
	require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)
	where := map[string]string{}
	for _, ns := range decodeAs[struct{ Namespaces []state.Namespace }](t, r).Namespaces {
		where[ns.Name] = ns.ShardID
	}
	require.Equal(t, map[string]string{"default": "big", "a": "small", "b": "big", "c": "big"}, where)
	requireError(t, b.do(t, http.MethodGet, "/control/v1/tenants/"+tid+"/namespaces", acme.OwnerKey, nil), 403, "forbidden")
	requireError(t, b.do(t, http.MethodGet, "/control/v1/tenants/"+unknownTID+"/namespaces", b.op, nil), 404, "not_found")

	// Gateways learn every member, to try when gossip names no leader.
	r = b.as(t, pkitest.Gateway).do(t, http.MethodGet, "/internal/v1/tenants/"+tid+"/namespaces/default", "", nil)
	require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)
	info := decodeAs[wire.NamespacePlacement](t, r)
	require.Equal(t, "127.0.0.1:9401", info.ShardAddr)
	require.Equal(t, []string{"127.0.0.1:9401", "127.0.0.1:9402"}, info.ShardMembers)

	// Raising a capacity by registering again makes room.
	_, err = b.srv.RegisterShard(ctx, registration("small", 10, "127.0.0.1:9501"))
	require.NoError(t, err)
	ns, err := b.srv.CreateNamespace(ctx, tid, "d")
	require.NoError(t, err)
	require.Equal(t, "small", ns.ShardID)
}

func TestStaticAndRegisteredShardsShareOnePlacement(t *testing.T) {
	t.Parallel()
	b := setup(t) // static s1 and s2
	ctx := context.Background()
	_, err := b.srv.RegisterShard(ctx, registration("s0", 0, "127.0.0.1:9001"))
	require.NoError(t, err)
	tid := b.newTenant(t, "acme").Tenant.ID // s0, s1, s2 all empty: s0
	var placed []string
	for _, name := range []string{"a", "b", "c"} {
		ns, err := b.srv.CreateNamespace(ctx, tid, name)
		require.NoError(t, err)
		placed = append(placed, ns.ShardID)
	}
	require.Equal(t, []string{"s1", "s2", "s0"}, placed)

	// A static shard that also registers keeps its configured address
	// and gains the registered members.
	_, err = b.srv.RegisterShard(ctx, registration("s1", 0, "127.0.0.1:9101", "127.0.0.1:9102"))
	require.NoError(t, err)
	info, err := b.srv.Namespace(ctx, tid, "a")
	require.NoError(t, err)
	require.Equal(t, "http://127.0.0.1:9001", info.ShardAddr)
	require.Equal(t, []string{"127.0.0.1:9101", "127.0.0.1:9102"}, info.ShardMembers)
	s1 := shardList(t, b)["s1"]
	require.True(t, s1.Static)
	require.Len(t, s1.Members, 2)
}

func TestRegistrySurvivesRestart(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cfg := testConfig(t, pkitest.New(t), func(c *Config) { c.Shards = nil })
	first := startServer(t, cfg)
	want, err := first.RegisterShard(ctx, registration("s7", 5, "127.0.0.1:9701"))
	require.NoError(t, err)
	_, err = first.CreateTenant(ctx, "acme")
	require.NoError(t, err)
	require.NoError(t, first.Stop())

	second := startServer(t, cfg)
	list, err := second.Shards(ctx)
	require.NoError(t, err)
	require.Len(t, list, 1)
	require.Equal(t, want.Members, list[0].Members)
	require.EqualValues(t, 5, list[0].Capacity)
	require.EqualValues(t, 1, list[0].Namespaces)
	require.True(t, want.RegisteredAt.Equal(*list[0].RegisteredAt))
}

func TestShardListShowsTheLeaderGossipKnows(t *testing.T) {
	t.Parallel()
	newPool := func(name string, meta gossip.Meta, join ...string) *gossip.Pool {
		p, err := gossip.New(gossip.Config{NodeName: name, BindAddr: "127.0.0.1:0", Keys: [][]byte{pkitest.GossipKey}, Meta: meta, Fast: true, Join: join})
		require.NoError(t, err)
		t.Cleanup(func() { _ = p.Shutdown() })
		return p
	}
	ctlPool := newPool("control", gossip.Meta{Role: gossip.RoleControl, NodeID: "control1"})
	newPool("s1-n2", gossip.Meta{Role: gossip.RoleShard, ShardID: "s1", NodeID: "s1-n2", RaftState: gossip.StateLeader,
		Term: 4, Leader: "s1-n2", LeaderHTTP: "127.0.0.1:9102", HTTPAddr: "127.0.0.1:9102"}, ctlPool.Addr())
	b := setup(t, func(c *Config) { c.Gossip = ctlPool })

	deadline := time.Now().Add(10 * time.Second)
	for shardList(t, b)["s1"].Leader == nil {
		require.True(t, time.Now().Before(deadline), "gossip never showed s1's leader")
		time.Sleep(20 * time.Millisecond)
	}
	require.Equal(t, &wire.ShardLeader{NodeID: "s1-n2", HTTPAddr: "127.0.0.1:9102", Term: 4}, shardList(t, b)["s1"].Leader)
	require.Nil(t, shardList(t, b)["s2"].Leader, "nothing in the pool speaks for s2")
}

package control

import (
	"net/http"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/pki"
	"github.com/jobbie/jobbie/internal/pki/pkitest"
	"github.com/jobbie/jobbie/wire"
)

// A node lost: the owner removes it (its id retired, its certificate no
// longer renewed) and joins a replacement to the same shard with a
// token for more nodes, under a new id only.
func TestReplaceASelfHostedNode(t *testing.T) {
	b, _ := selfHosted(t)
	gw := b.as(t, pkitest.Gateway)
	a, other := b.newTenant(t, "acme"), b.newTenant(t, "globex")
	base := "/internal/v1/tenants/" + a.Tenant.ID
	tok := decodeAs[wire.JoinToken](t, gw.do(t, "POST", base+"/shards/join-tokens", "", map[string]any{"name": "dc", "nodes": 3}))
	shard := base + "/shards/" + tok.ShardID
	nodes := map[string]joinedNode{}
	for _, n := range []string{"n1", "n2", "n3"} {
		nodes[n] = joinNode(t, b, tok, n)
	}
	list := func() wire.OwnedShard {
		t.Helper()
		l := decodeAs[wire.OwnedShardList](t, gw.do(t, "GET", base+"/shards", "", nil))
		require.Len(t, l.Shards, 1)
		return l.Shards[0]
	}

	// Bad input and others' shards: nothing minted.
	requireError(t, gw.do(t, "POST", shard+"/join-tokens", "", map[string]any{"nodes": 6}), 400, "bad_request", "nodes")
	requireError(t, gw.do(t, "POST", shard+"/join-tokens", "", map[string]any{"expires_in": "30s"}), 400, "bad_request", "expires_in")
	requireError(t, gw.do(t, "POST", base+"/shards/sh_unknown/join-tokens", "", nil), 404, "not_found")
	obase := "/internal/v1/tenants/" + other.Tenant.ID
	requireError(t, gw.do(t, "POST", obase+"/shards/"+tok.ShardID+"/join-tokens", "", nil), 404, "not_found")
	requireError(t, gw.do(t, "DELETE", obase+"/shards/"+tok.ShardID+"/nodes/n1", "", nil), 404, "not_found")
	requireError(t, b.as(t, pkitest.Shard("s1", "n1")).do(t, "POST", shard+"/join-tokens", "", nil), 403, "forbidden")
	require.Equal(t, 3, list().ExpectedNodes)
	require.Nil(t, list().TokenExpiresAt)

	// n1 is lost: removed, it renews no more.
	requireError(t, gw.do(t, "DELETE", shard+"/nodes/n9", "", nil), 404, "not_found")
	require.Equal(t, http.StatusNoContent, gw.do(t, "DELETE", shard+"/nodes/n1", "", nil).status)
	sh := list()
	require.Equal(t, []string{"n2", "n3"}, sh.Nodes)
	require.Equal(t, []string{"n1"}, sh.Retired, "the tenant sees the retired id")
	require.Equal(t, 2, sh.ExpectedNodes)
	n1 := nodes["n1"]
	r := b.do(t, "POST", "/control/v1/join/renew", "", wire.RenewRequest{Certificate: n1.cert, CSR: csrOf(t, n1.key, pki.Identity{})})
	requireError(t, r, 403, "forbidden")
	all := decodeAs[wire.SelfHostedShards](t, gw.do(t, "GET", "/internal/v1/shards/self-hosted", "", nil))
	require.Equal(t, []string{"n2", "n3"}, all.Shards[0].Nodes)

	// A token for one more node: one at a time.
	r = gw.do(t, "POST", shard+"/join-tokens", "", map[string]any{"nodes": 1, "expires_in": "10m"})
	require.Equal(t, http.StatusCreated, r.status, "%s", r.body)
	more := decodeAs[wire.JoinToken](t, r)
	require.Equal(t, tok.ShardID, more.ShardID)
	require.Equal(t, "dc", more.Name)
	require.Equal(t, 1, more.Nodes)
	require.NotEqual(t, tok.Token, more.Token)
	requireError(t, gw.do(t, "POST", shard+"/join-tokens", "", nil), 409, "conflict")
	sh = list()
	require.Equal(t, 3, sh.ExpectedNodes)
	require.NotNil(t, sh.TokenExpiresAt)

	// New ids only: not a member's, not the removed node's.
	join := func(node string) response {
		return b.do(t, "POST", "/control/v1/join", "", wire.JoinRequest{Token: more.Token, NodeID: node, CSR: csrOf(t, n1.key, pki.Identity{})})
	}
	requireError(t, join("n1"), 409, "conflict")
	requireError(t, join("n2"), 409, "conflict")
	n4 := joinNode(t, b, more, "n4")
	require.Equal(t, pki.Identity{Role: pki.RoleShard, Shard: tok.ShardID, Node: "n4", Tenant: a.Tenant.ID}, n4.id)
	requireError(t, join("n5"), 401, "unauthenticated") // spent
	sh = list()
	require.Equal(t, []string{"n2", "n3", "n4"}, sh.Nodes)
	require.Equal(t, 3, sh.ExpectedNodes)
	require.Nil(t, sh.TokenExpiresAt)
	r = b.do(t, "POST", "/control/v1/join/renew", "", wire.RenewRequest{Certificate: n4.cert, CSR: csrOf(t, n4.key, pki.Identity{})})
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)

	// Growth is bounded; the last node is not removed.
	requireError(t, gw.do(t, "POST", shard+"/join-tokens", "", map[string]any{"nodes": 5}), 409, "conflict")
	require.Equal(t, http.StatusNoContent, gw.do(t, "DELETE", shard+"/nodes/n2", "", nil).status)
	require.Equal(t, http.StatusNoContent, gw.do(t, "DELETE", shard+"/nodes/n3", "", nil).status)
	requireError(t, gw.do(t, "DELETE", shard+"/nodes/n4", "", nil), 409, "conflict")
	require.Equal(t, []string{"n4"}, list().Nodes)
	// Revoking the shard still works, and takes its node tokens along.
	more2 := decodeAs[wire.JoinToken](t, gw.do(t, "POST", shard+"/join-tokens", "", nil))
	require.Equal(t, http.StatusNoContent, gw.do(t, "DELETE", shard, "", nil).status)
	requireError(t, b.do(t, "POST", "/control/v1/join", "", wire.JoinRequest{Token: more2.Token, NodeID: "n7", CSR: csrOf(t, n1.key, pki.Identity{})}), 401, "unauthenticated")
	requireError(t, gw.do(t, "POST", shard+"/join-tokens", "", nil), 404, "not_found")
}

// An expired token (the shard's first, or one for more nodes) is
// replaced by the next one minted.
func TestNodeJoinTokenReplacesAnExpiredOne(t *testing.T) {
	clk := clockwork.NewFakeClockAt(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	ca, err := pki.NewCA("self-hosted")
	require.NoError(t, err)
	b := setup(t, func(c *Config) { c.SelfHostedCA, c.Clock = ca, clk })
	gw := b.as(t, pkitest.Gateway)
	a := b.newTenant(t, "acme")
	base := "/internal/v1/tenants/" + a.Tenant.ID
	tok := decodeAs[wire.JoinToken](t, gw.do(t, "POST", base+"/shards/join-tokens", "", map[string]any{"name": "dc", "expires_in": "1m", "nodes": 3}))
	shard := base + "/shards/" + tok.ShardID
	requireError(t, gw.do(t, "POST", shard+"/join-tokens", "", nil), 409, "conflict")
	clk.Advance(time.Minute)
	more := decodeAs[wire.JoinToken](t, gw.do(t, "POST", shard+"/join-tokens", "", map[string]any{"nodes": 2, "expires_in": "1m"}))
	require.Equal(t, clk.Now().Add(time.Minute), more.ExpiresAt)
	// The first is gone with it.
	requireError(t, b.do(t, "POST", "/control/v1/join", "", wire.JoinRequest{Token: tok.Token, NodeID: "n1", CSR: csrFor(t, pki.Identity{})}), 401, "unauthenticated")
	clk.Advance(time.Minute)
	require.Equal(t, http.StatusCreated, gw.do(t, "POST", shard+"/join-tokens", "", nil).status)
	l := decodeAs[wire.OwnedShardList](t, gw.do(t, "GET", base+"/shards", "", nil))
	require.Equal(t, 1, l.Shards[0].ExpectedNodes)
}

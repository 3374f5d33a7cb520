package gateway

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/pki"
	"github.com/jobbie/jobbie/internal/tunnel"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// seedShard gives tenantA shard sh_a with nodes, in control's list of the
// tenant's shards and in the tunnel listeners' list.
func seedShard(b *bundle, nodes ...string) {
	b.control.Lock()
	defer b.control.Unlock()
	b.control.Shards.ByTenant = map[string][]wire.OwnedShard{tenantA: {{ID: "sh_a", Name: "dc", Nodes: append([]string{}, nodes...)}}}
	b.control.Shards.SelfHosted = []wire.SelfHostedShard{{ID: "sh_a", TenantID: tenantA, Nodes: append([]string{}, nodes...)}}
}

// A token for more nodes and a node's removal: the owner's alone, bad ids
// and bodies refused before control is asked, control's answers passed
// through, another tenant's shard a 404; the route for a new shard's
// token is still served beside the one for a shard's.
func TestShardNodesThroughTheGateway(t *testing.T) {
	t.Parallel()
	b := setup(t)
	seedShard(b, "n1", "n2", "n3")
	owner := b.key(t, tenancy.RoleOwner, "*")
	admin := b.key(t, tenancy.RoleAdmin, "*")
	keyB := b.signer.Sign(claimsFor(tenantB, "key_b", tenancy.RoleOwner, "*"))
	calls := func() int {
		b.control.Lock()
		defer b.control.Unlock()
		return b.control.Shards.Calls
	}

	e := b.do(t, http.MethodPost, "/api/v1/shards/sh_a/join-tokens", admin, map[string]any{"nodes": 1}).requireError(t, http.StatusForbidden, apierr.Forbidden)
	require.Contains(t, e.Message, "only an owner key may mint shard join tokens")
	e = b.do(t, http.MethodDelete, "/api/v1/shards/sh_a/nodes/n3", admin, nil).requireError(t, http.StatusForbidden, apierr.Forbidden)
	require.Contains(t, e.Message, "only an owner key may remove a shard's nodes")
	for _, bad := range []struct{ method, path, field string }{
		{http.MethodPost, "/api/v1/shards/-sh/join-tokens", "id"},
		{http.MethodPost, "/api/v1/shards/sh%20a/join-tokens", "id"}, // an escaped space reaches the id check
		{http.MethodDelete, "/api/v1/shards/.sh/nodes/n3", "id"},
		{http.MethodDelete, "/api/v1/shards/sh_a/nodes/n%2F3", ""},
		{http.MethodDelete, "/api/v1/shards/sh_a/nodes/_n3", "node"},
	} {
		e := b.do(t, bad.method, bad.path, owner, nil).requireError(t, http.StatusBadRequest, apierr.BadRequest)
		require.Equal(t, bad.field, e.Field, "%s %s: %+v", bad.method, bad.path, e)
	}
	b.do(t, http.MethodPost, "/api/v1/shards/sh_a/join-tokens", owner, map[string]any{"nodes": 1, "bogus": 1}).requireError(t, http.StatusBadRequest, apierr.BadRequest)
	require.Zero(t, calls(), "nothing refused here reached control")

	// A token for two more nodes; no body is one node, as control reads it.
	r := b.do(t, http.MethodPost, "/api/v1/shards/sh_a/join-tokens", owner, map[string]any{"nodes": 2, "expires_in": "30m"})
	require.Equal(t, http.StatusCreated, r.status, "body: %s", r.body)
	var tok wire.JoinToken
	r.decode(t, &tok)
	require.Equal(t, wire.JoinToken{Token: "jst_more", ShardID: "sh_a", Name: "dc", Nodes: 2, ExpiresAt: jan(4)}, tok)
	b.control.Lock()
	require.Equal(t, 2, b.control.Shards.LastAdd.Nodes)
	require.JSONEq(t, `"30m"`, string(b.control.Shards.LastAdd.ExpiresIn))
	b.control.Unlock()
	r = b.do(t, http.MethodPost, "/api/v1/shards/sh_a/join-tokens", owner, nil)
	require.Equal(t, http.StatusCreated, r.status, "body: %s", r.body)
	r.decode(t, &tok)
	require.Equal(t, 1, tok.Nodes)
	// Control's refusal passes through as it is.
	e = b.do(t, http.MethodPost, "/api/v1/shards/sh_a/join-tokens", owner, map[string]any{"nodes": 5}).requireError(t, http.StatusConflict, apierr.Conflict)
	require.Contains(t, e.Message, "would pass 7")

	// The new shard's token is its own route still.
	r = b.do(t, http.MethodPost, "/api/v1/shards/join-tokens", owner, map[string]any{"name": "dc2"})
	require.Equal(t, http.StatusCreated, r.status, "body: %s", r.body)
	r.decode(t, &tok)
	require.Equal(t, "jst_secret", tok.Token)
	b.control.Lock()
	require.Equal(t, "dc2", b.control.Shards.LastToken.Name)
	b.control.Unlock()

	// Another tenant's shard is not found, and stays as it was.
	b.do(t, http.MethodPost, "/api/v1/shards/sh_a/join-tokens", keyB, nil).requireError(t, http.StatusNotFound, apierr.NotFound)
	b.do(t, http.MethodDelete, "/api/v1/shards/sh_a/nodes/n3", keyB, nil).requireError(t, http.StatusNotFound, apierr.NotFound)

	b.do(t, http.MethodDelete, "/api/v1/shards/sh_a/nodes/n9", owner, nil).requireError(t, http.StatusNotFound, apierr.NotFound)
	require.Equal(t, http.StatusNoContent, b.do(t, http.MethodDelete, "/api/v1/shards/sh_a/nodes/n3", owner, nil).status)
	require.Equal(t, http.StatusNoContent, b.do(t, http.MethodDelete, "/api/v1/shards/sh_a/nodes/n2", owner, nil).status)
	e = b.do(t, http.MethodDelete, "/api/v1/shards/sh_a/nodes/n1", owner, nil).requireError(t, http.StatusConflict, apierr.Conflict)
	require.Contains(t, e.Message, "last")
	var list wire.OwnedShardList
	b.do(t, http.MethodGet, "/api/v1/shards", owner, nil).decode(t, &list)
	require.Equal(t, []string{"n1"}, list.Shards[0].Nodes)
}

// A node removed from its shard loses its live tunnel at once: through
// this gateway's route, cut before the answer; through another gateway
// (control's list changes), cut at the next poll. Both are refused when
// they come back, and the shard's remaining node stays and serves.
func TestRemovedNodeCutFromItsTunnel(t *testing.T) {
	t.Parallel()
	own, err := pki.NewCA("self-hosted shards")
	require.NoError(t, err)
	b := newBundle(t)
	seedShard(b, "n1", "n2", "n3")
	b.control.AddNamespace(tenantA, "onprem", "sh_a", "tunnel://sh_a/n1")
	b.start(t, func(c *Config) { c.TunnelAddr, c.SelfHostedCA = "127.0.0.1:0", own.CertPEM() })
	b.waitReady(t)
	key := b.key(t, tenancy.RoleOwner, "*")
	agents := map[string]*tunnel.Agent{}
	var fs1 *fakeShard
	for _, n := range []string{"n1", "n2", "n3"} {
		a, fs := selfHostedNode(t, b, own, "sh_a", n, tenantA)
		agents[n] = a
		if n == "n1" {
			fs1 = fs
		}
	}
	for _, a := range agents {
		waitState(t, a, "connected", func(st tunnel.AgentState) bool { return st.Connected })
	}
	reg := b.gw.tunnels.Registry()

	require.Equal(t, http.StatusNoContent, b.do(t, http.MethodDelete, "/api/v1/shards/sh_a/nodes/n3", key, nil).status)
	require.False(t, reg.Connected("sh_a", "n3"), "cut before the answer")
	waitState(t, agents["n3"], "cut off", func(st tunnel.AgentState) bool { return !st.Connected })

	// Removed through another gateway: control lists n2 no more.
	b.control.Lock()
	b.control.Shards.SelfHosted = []wire.SelfHostedShard{{ID: "sh_a", TenantID: tenantA, Nodes: []string{"n1"}}}
	b.control.Unlock()
	waitState(t, agents["n2"], "cut off", func(st tunnel.AgentState) bool { return !st.Connected })

	for _, n := range []string{"n2", "n3"} {
		st := waitState(t, agents[n], "refused", func(st tunnel.AgentState) bool { return st.FailedAttempts >= 2 && !st.Connected })
		require.Contains(t, st.LastError, "did not admit", n)
		require.False(t, reg.Connected("sh_a", n))
	}
	require.True(t, agents["n1"].State().Connected, "the remaining node stays")
	require.True(t, reg.Connected("sh_a", "n1"))
	seen := fs1.count()
	r := b.do(t, http.MethodPost, "/api/v1/enqueue", key, enqueueBody, wire.NamespaceHeader, "onprem")
	require.Equal(t, http.StatusCreated, r.status, "body: %s", r.body)
	require.Equal(t, seen+1, fs1.count())
}

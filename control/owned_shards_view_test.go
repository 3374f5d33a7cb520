package control

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/control/state"
	"github.com/jobbie/jobbie/internal/pki"
	"github.com/jobbie/jobbie/internal/pki/pkitest"
	"github.com/jobbie/jobbie/wire"
)

// TestOwnedShardDetailsAndPlacedNamespaces: GET shards reports the
// token's node count, its expiry while nodes are left to join and the
// namespaces placed there; namespaces name their shard only when it is
// the tenant's own self-hosted one; a shard no node joined refuses a
// retention before creating anything, and placement says it is unjoined.
func TestOwnedShardDetailsAndPlacedNamespaces(t *testing.T) {
	b, _ := selfHosted(t)
	gw := b.as(t, pkitest.Gateway)
	a, other := b.newTenant(t, "acme"), b.newTenant(t, "globex")
	base, obase := "/internal/v1/tenants/"+a.Tenant.ID, "/internal/v1/tenants/"+other.Tenant.ID
	tok := decodeAs[wire.JoinToken](t, gw.do(t, "POST", base+"/shards/join-tokens", "", map[string]any{"name": "dc", "nodes": 3}))
	shards := func() []wire.OwnedShard {
		return decodeAs[wire.OwnedShardList](t, gw.do(t, "GET", base+"/shards", "", nil)).Shards
	}
	list := shards()
	require.Len(t, list, 1)
	require.Equal(t, 3, list[0].ExpectedNodes)
	require.NotNil(t, list[0].TokenExpiresAt)
	require.Equal(t, tok.ExpiresAt, *list[0].TokenExpiresAt)
	require.Equal(t, []string{}, list[0].Namespaces)

	// No node yet: a retention is refused (409 naming it), nothing created.
	r := gw.do(t, "POST", base+"/namespaces", "", map[string]any{"name": "onprem", "shard": tok.ShardID, "retention": "24h"})
	requireError(t, r, 409, "conflict", "retention")
	require.Contains(t, string(r.body), "no node of shard "+`\"`+tok.ShardID+`\"`+" has joined yet")
	requireError(t, gw.do(t, "GET", base+"/namespaces/onprem", "", nil), 404, "not_found")
	// Another tenant naming it learns nothing new: 404 as for any unknown shard.
	requireError(t, gw.do(t, "POST", obase+"/namespaces", "", map[string]any{"name": "x", "shard": tok.ShardID, "retention": "24h"}), 404, "not_found")

	r = gw.do(t, "POST", base+"/namespaces", "", map[string]any{"name": "onprem", "shard": tok.ShardID})
	require.Equal(t, http.StatusCreated, r.status, "%s", r.body)
	require.Equal(t, tok.ShardID, decodeAs[wire.Namespace](t, r).Shard)
	pl := decodeAs[wire.NamespacePlacement](t, gw.do(t, "GET", base+"/namespaces/onprem", "", nil))
	require.Equal(t, tok.ShardID, pl.Shard)
	require.True(t, pl.Unjoined)
	r = gw.do(t, "PATCH", base+"/namespaces/onprem", "", map[string]any{"description": "on site"})
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	require.Equal(t, tok.ShardID, decodeAs[wire.Namespace](t, r).Shard)

	// Hosted namespaces never carry a shard (only control's shard_id).
	hosted := decodeAs[map[string]any](t, gw.do(t, "GET", base+"/namespaces/default", "", nil))
	require.NotContains(t, hosted, "shard")
	require.NotContains(t, hosted, "unjoined")
	var all struct {
		Namespaces []map[string]any `json:"namespaces"`
	}
	require.NoError(t, json.Unmarshal(gw.do(t, "GET", base+"/namespaces", "", nil).body, &all))
	named := map[string]any{}
	for _, ns := range all.Namespaces {
		named[ns["name"].(string)] = ns["shard"]
	}
	require.Equal(t, map[string]any{"default": nil, "onprem": tok.ShardID}, named)
	require.NoError(t, json.Unmarshal(gw.do(t, "GET", obase+"/namespaces", "", nil).body, &all))
	for _, ns := range all.Namespaces {
		require.NotContains(t, ns, "shard")
	}
	require.Empty(t, decodeAs[wire.OwnedShardList](t, gw.do(t, "GET", obase+"/shards", "", nil)).Shards)

	join := func(node string) {
		id := pki.Identity{Role: pki.RoleShard, Shard: tok.ShardID, Node: node, Tenant: a.Tenant.ID}
		r := b.do(t, "POST", "/control/v1/join", "", wire.JoinRequest{Token: tok.Token, NodeID: node, CSR: csrFor(t, id)})
		require.Equal(t, http.StatusCreated, r.status, "%s", r.body)
	}
	join("n1")
	pl = decodeAs[wire.NamespacePlacement](t, gw.do(t, "GET", base+"/namespaces/onprem", "", nil))
	require.False(t, pl.Unjoined)
	list = shards()
	require.Equal(t, []string{"n1"}, list[0].Nodes)
	require.Equal(t, 3, list[0].ExpectedNodes)
	require.NotNil(t, list[0].TokenExpiresAt)
	require.Equal(t, []string{"onprem"}, list[0].Namespaces)

	// Joined: a retention is the shard's to apply, control takes it.
	r = gw.do(t, "POST", base+"/namespaces", "", map[string]any{"name": "onprem2", "shard": tok.ShardID, "retention": "24h"})
	require.Equal(t, http.StatusCreated, r.status, "%s", r.body)
	join("n2")
	join("n3")
	raw := decodeAs[map[string][]map[string]any](t, gw.do(t, "GET", base+"/shards", "", nil))
	require.NotContains(t, raw["shards"][0], "token_expires_at")
	require.EqualValues(t, 3, raw["shards"][0]["expected_nodes"])
	require.Equal(t, []any{"onprem", "onprem2"}, raw["shards"][0]["namespaces"])
}

// An owned shard stored before its token's node count was: it reports
// the nodes that joined.
func TestOwnedShardExpectedNodesOfOlderRecords(t *testing.T) {
	require.Equal(t, 2, state.OwnedShard{Nodes: []string{"n1", "n2"}}.ExpectedNodes())
	require.Equal(t, 0, state.OwnedShard{Nodes: []string{}}.ExpectedNodes())
	require.Equal(t, 3, state.OwnedShard{Nodes: []string{"n1"}, Expected: 3}.ExpectedNodes())
}

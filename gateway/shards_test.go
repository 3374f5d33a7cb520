package gateway

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

func TestSelfHostedShardsThroughTheGateway(t *testing.T) {
	t.Parallel()
	b := setup(t)
	owner := b.key(t, tenancy.RoleOwner, "*")
	admin := b.key(t, tenancy.RoleAdmin, "*")
	viewer := b.key(t, tenancy.RoleViewer, "*")
	calls := func() int {
		b.control.Lock()
		defer b.control.Unlock()
		return b.control.Shards.Calls
	}

	// Only an owner key mints or revokes; nothing reaches control else.
	for _, k := range []string{admin, viewer} {
		b.do(t, http.MethodPost, "/api/v1/shards/join-tokens", k, map[string]any{"name": "dc1"}).requireError(t, http.StatusForbidden, apierr.Forbidden)
		b.do(t, http.MethodDelete, "/api/v1/shards/sh_x", k, nil).requireError(t, http.StatusForbidden, apierr.Forbidden)
	}
	require.Zero(t, calls())
	b.do(t, http.MethodPost, "/api/v1/shards/join-tokens", owner, map[string]any{"name": "dc1", "bogus": 1}).requireError(t, http.StatusBadRequest, apierr.BadRequest)
	require.Zero(t, calls())

	r := b.do(t, http.MethodPost, "/api/v1/shards/join-tokens", owner, map[string]any{"name": "dc1", "expires_in": "30m", "nodes": 3})
	require.Equal(t, http.StatusCreated, r.status, "body: %s", r.body)
	var tok wire.JoinToken
	r.decode(t, &tok)
	require.Equal(t, "jst_secret", tok.Token)
	b.control.Lock()
	require.Equal(t, "dc1", b.control.Shards.LastToken.Name)
	require.Equal(t, 3, b.control.Shards.LastToken.Nodes)
	require.JSONEq(t, `"30m"`, string(b.control.Shards.LastToken.ExpiresIn))
	b.control.Unlock()

	// Listing needs namespace.read; it is the caller's tenant's list.
	var list wire.OwnedShardList
	b.do(t, http.MethodGet, "/api/v1/shards", viewer, nil).decode(t, &list)
	require.Len(t, list.Shards, 1)
	require.Equal(t, tok.ShardID, list.Shards[0].ID)
	keyB := b.signer.Sign(claimsFor(tenantB, "key_b", tenancy.RoleOwner, "*"))
	b.do(t, http.MethodGet, "/api/v1/shards", keyB, nil).decode(t, &list)
	require.Empty(t, list.Shards)
	b.do(t, http.MethodDelete, "/api/v1/shards/"+tok.ShardID, keyB, nil).requireError(t, http.StatusNotFound, apierr.NotFound)

	// A namespace names its shard; the gateway passes it to control.
	r = b.do(t, http.MethodPost, "/api/v1/namespaces", owner, map[string]any{"name": "onprem", "shard": tok.ShardID})
	require.Equal(t, http.StatusCreated, r.status, "body: %s", r.body)
	b.control.Lock()
	require.Equal(t, tok.ShardID, b.control.Shards.LastPlacedOn)
	b.control.Unlock()

	require.Equal(t, http.StatusNoContent, b.do(t, http.MethodDelete, "/api/v1/shards/"+tok.ShardID, owner, nil).status)
	b.do(t, http.MethodGet, "/api/v1/shards", owner, nil).decode(t, &list)
	require.Empty(t, list.Shards)
}

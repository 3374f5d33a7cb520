package control

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/cockroachdb/pebble"
	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/control/state"
	"github.com/jobbie/jobbie/internal/pki/pkitest"
	"github.com/jobbie/jobbie/wire"
)

// A gateway's tenant create under an Idempotency-Key: the same request
// again within 24 h (by the leader's clock) is answered 200 with the
// first answer and Idempotency-Replayed, and creates nothing; another
// request with the key is 422 naming the header; another tenant's same
// key is its own; after 24 h the key is a new one.
func TestHTTPIdempotentCreates(t *testing.T) {
	t.Parallel()
	clk := clockwork.NewFakeClockAt(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	b := setup(t, func(c *Config) { c.Clock = clk })
	gw := b.as(t, pkitest.Gateway)
	acme := b.newTenant(t, "acme").Tenant.ID
	bravo := b.newTenant(t, "bravo").Tenant.ID
	key := wire.IdempotencyKeyHeader
	path := func(tid, coll string) string { return "/internal/v1/tenants/" + tid + "/" + coll }

	for _, c := range []struct {
		coll   string
		status int
		body   map[string]any
	}{
		{"namespaces", http.StatusCreated, map[string]any{"name": "orders", "description": "d"}},
		{"keys", http.StatusCreated, map[string]any{"name": "ci", "role": "producer", "namespaces": []string{"default"}}},
		{"roles", http.StatusCreated, map[string]any{"name": "pusher", "permissions": []map[string]any{
			{"actions": []string{"job.enqueue"}, "namespaces": []string{"*"}, "queues": []string{"*"}}}}},
		{"backups", http.StatusAccepted, map[string]any{"namespace": "default"}},
	} {
		first := gw.do(t, http.MethodPost, path(acme, c.coll), "", c.body, key, "k-"+c.coll)
		require.Equal(t, c.status, first.status, "%s: %s", c.coll, first.body)
		require.Empty(t, first.header.Get(wire.IdempotencyReplayedHeader))
		again := gw.do(t, http.MethodPost, path(acme, c.coll), "", c.body, key, "k-"+c.coll)
		require.Equal(t, http.StatusOK, again.status, "%s: %s", c.coll, again.body)
		require.Equal(t, "true", again.header.Get(wire.IdempotencyReplayedHeader), c.coll)
		require.JSONEq(t, string(first.body), string(again.body), "%s: the first answer, its key's token too", c.coll)

		other := map[string]any{}
		for k, v := range c.body {
			other[k] = v
		}
		other["description"] = "another"
		if c.coll == "backups" {
			other = map[string]any{"namespace": "orders"}
		}
		r := gw.do(t, http.MethodPost, path(acme, c.coll), "", other, key, "k-"+c.coll)
		requireError(t, r, http.StatusUnprocessableEntity, "idempotency_key_reused", key)

		r = gw.do(t, http.MethodPost, path(bravo, c.coll), "", c.body, key, "k-"+c.coll)
		require.Equal(t, c.status, r.status, "%s: tenant bravo's key is its own: %s", c.coll, r.body)
		require.Empty(t, r.header.Get(wire.IdempotencyReplayedHeader))
	}
	ctx := context.Background()
	keys, err := b.srv.Keys(ctx, acme)
	require.NoError(t, err)
	require.Len(t, keys, 2, "the owner and one ci key")
	backups, err := b.srv.Backups(ctx, acme, nil)
	require.NoError(t, err)
	require.Len(t, backups, 1, "one backup")

	// The replayed token is the first, and it works.
	first := decodeAs[wire.CreatedKey](t, gw.do(t, http.MethodPost, path(acme, "keys"), "",
		map[string]any{"name": "ci", "role": "producer", "namespaces": []string{"default"}}, key, "k-keys"))
	claims, err := b.srv.VerifyKey(ctx, first.Token)
	require.NoError(t, err)
	require.Equal(t, acme, claims.TenantID)

	// 24 h later, by the leader's clock, the key is a new one.
	clk.Advance(wire.IdempotencyTTL + time.Second)
	r := gw.do(t, http.MethodPost, path(acme, "keys"), "", map[string]any{"name": "ci", "role": "producer", "namespaces": []string{"default"}}, key, "k-keys")
	require.Equal(t, http.StatusCreated, r.status, "body: %s", r.body)
	require.NotEqual(t, first.ID, decodeAs[wire.CreatedKey](t, r).ID)
	keys, err = b.srv.Keys(ctx, acme)
	require.NoError(t, err)
	require.Len(t, keys, 3)
}

// Every other route refuses the header, naming it, and changes nothing;
// so does a bad key on a route that takes one.
func TestHTTPRefusesIdempotencyKeysElsewhere(t *testing.T) {
	t.Parallel()
	b := setup(t)
	gw := b.as(t, pkitest.Gateway)
	tid := b.newTenant(t, "acme").Tenant.ID
	key := wire.IdempotencyKeyHeader
	r := b.do(t, http.MethodPost, "/control/v1/tenants", b.op, map[string]string{"name": "beta"}, key, "k")
	requireError(t, r, 400, "bad_request", key)
	r = gw.do(t, http.MethodPost, "/internal/v1/tenants/"+tid+"/shards/join-tokens", "", map[string]any{"name": "edge"}, key, "k")
	requireError(t, r, 400, "bad_request", key)
	r = gw.do(t, http.MethodPut, "/internal/v1/tenants/"+tid+"/roles/x", "", map[string]any{}, key, "k")
	requireError(t, r, 400, "bad_request", key)
	r = gw.do(t, http.MethodPost, "/internal/v1/tenants/"+tid+"/roles", "", map[string]any{"name": "x", "permissions": []any{}}, key, "caf\u00e9")
	requireError(t, r, 400, "bad_request", key)
	tenants, err := b.srv.Tenants(context.Background())
	require.NoError(t, err)
	require.Len(t, tenants, 1, "nothing was created")
	n, err := viewValue(b.srv, func(r pebble.Reader) (uint64, error) { return state.IdemKeys(r, tid) })
	require.NoError(t, err)
	require.Zero(t, n)
}

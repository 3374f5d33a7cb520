package control

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/control/service"
	"github.com/jobbie/jobbie/control/state"
	"github.com/jobbie/jobbie/internal/pki/pkitest"
	"github.com/jobbie/jobbie/wire"
)

const unknownTID = "t_01hzzzzzzzzzzzzzzzzzzzzzzz"

// The tenant-facing internal API is the gateways' alone: without a client
// certificate it is a 401 whatever key comes along, with another role's
// certificate a 403.
func TestHTTPInternalIsTheGatewaysAlone(t *testing.T) {
	t.Parallel()
	b := setup(t)
	acme := b.newTenant(t, "acme")
	tid := acme.Tenant.ID
	endpoints := []struct{ method, path string }{
		{http.MethodGet, "/internal/v1/revocations"},
		{http.MethodGet, "/internal/v1/tenants/" + tid + "/namespaces"},
		{http.MethodGet, "/internal/v1/tenants/" + tid + "/namespaces/default"},
		{http.MethodPost, "/internal/v1/tenants/" + tid + "/namespaces"},
		{http.MethodGet, "/internal/v1/tenants/" + tid + "/keys"},
		{http.MethodPost, "/internal/v1/tenants/" + tid + "/keys"},
		{http.MethodDelete, "/internal/v1/tenants/" + tid + "/keys/key_01hzzzzzzzzzzzzzzzzzzzzzzz"},
		{http.MethodPatch, "/internal/v1/tenants/" + tid + "/namespaces/default"},
		{http.MethodDelete, "/internal/v1/tenants/" + tid + "/namespaces/default"},
		{http.MethodGet, "/internal/v1/tenants/" + tid + "/keys/key_01hzzzzzzzzzzzzzzzzzzzzzzz"},
		{http.MethodPost, "/internal/v1/tenants/" + tid + "/keys/key_01hzzzzzzzzzzzzzzzzzzzzzzz/rotate"},
		{http.MethodPost, "/internal/v1/keys/used"},
		{http.MethodGet, "/internal/v1/tenants/" + tid + "/plan"},
		{http.MethodGet, "/internal/v1/tenants/" + tid + "/quota"},
		{http.MethodGet, "/internal/v1/tenants/" + tid + "/invoices"},
		{http.MethodGet, "/internal/v1/tenants/" + tid + "/invoices/upcoming"},
		{http.MethodGet, "/internal/v1/tenants/" + tid + "/invoices/inv_" + tid + "_2026-01"},
	}
	others := []*bundle{b.as(t, pkitest.Operator), b.as(t, pkitest.Shard("s1", "n1")), b.as(t, pkitest.Metrics), b.as(t, pkitest.Control)}
	for _, e := range endpoints {
		for _, tok := range []string{"", "not-a-key", b.op, acme.OwnerKey} {
			requireError(t, b.do(t, e.method, e.path, tok, map[string]string{"name": "x"}), 401, "unauthenticated")
		}
		for _, o := range others {
			for _, tok := range []string{"", b.op} {
				requireError(t, o.do(t, e.method, e.path, tok, map[string]string{"name": "x"}), 403, "forbidden")
			}
		}
	}
	ns, err := b.srv.Namespaces(context.Background(), tid)
	require.NoError(t, err)
	require.Len(t, ns, 1, "no refused request created a namespace")
}

func TestHTTPNamespaces(t *testing.T) {
	t.Parallel()
	b := setup(t)
	gw := b.as(t, pkitest.Gateway)
	tid := b.newTenant(t, "acme").Tenant.ID
	base := "/internal/v1/tenants/" + tid + "/namespaces"

	r := gw.do(t, http.MethodPost, base, "", map[string]string{"name": "emails"})
	require.Equal(t, http.StatusCreated, r.status, "body: %s", r.body)
	created := decodeAs[state.Namespace](t, r)
	require.Equal(t, "emails", created.Name)
	require.Equal(t, "s2", created.ShardID, "default is on s1, so s2 has fewer")
	require.ElementsMatch(t, []string{"name", "description", "deletion_protection", "created_at", "shard_id"}, keysOf(decodeAs[map[string]any](t, r)))

	requireError(t, gw.do(t, http.MethodPost, base, "", map[string]string{"name": "emails"}), 409, "conflict")
	requireError(t, gw.do(t, http.MethodPost, base, "", map[string]string{"name": "Bad_Name"}), 400, "bad_request", "name")
	requireError(t, gw.do(t, http.MethodPost, base, "", `[1,2]`), 400, "invalid_json")
	requireError(t, gw.do(t, http.MethodPost, "/internal/v1/tenants/"+unknownTID+"/namespaces", "", map[string]string{"name": "x"}), 404, "not_found")
	requireError(t, gw.do(t, http.MethodPost, "/internal/v1/tenants/nonsense/namespaces", "", map[string]string{"name": "x"}), 404, "not_found")

	r = gw.do(t, http.MethodGet, base, "", nil)
	require.Equal(t, http.StatusOK, r.status)
	list := decodeAs[struct{ Namespaces []state.Namespace }](t, r)
	require.Equal(t, []string{"default", "emails"}, []string{list.Namespaces[0].Name, list.Namespaces[1].Name})
	require.Equal(t, created, list.Namespaces[1])
	requireError(t, gw.do(t, http.MethodGet, "/internal/v1/tenants/"+unknownTID+"/namespaces", "", nil), 404, "not_found")

	r = gw.do(t, http.MethodGet, base+"/emails", "", nil)
	require.Equal(t, http.StatusOK, r.status)
	require.Equal(t, wire.NamespacePlacement{Namespace: wire.Namespace{Name: created.Name, CreatedAt: created.CreatedAt},
		ShardID: created.ShardID, ShardAddr: "http://127.0.0.1:9002"},
		decodeAs[wire.NamespacePlacement](t, r))
	require.ElementsMatch(t, []string{"name", "description", "deletion_protection", "created_at", "shard_id", "shard_addr"},
		keysOf(decodeAs[map[string]any](t, r)))
	requireError(t, gw.do(t, http.MethodGet, base+"/nope", "", nil), 404, "not_found")
	requireError(t, gw.do(t, http.MethodGet, "/internal/v1/tenants/"+unknownTID+"/namespaces/default", "", nil), 404, "not_found")
}

func TestHTTPKeys(t *testing.T) {
	t.Parallel()
	b := setup(t)
	gw := b.as(t, pkitest.Gateway)
	ctx := context.Background()
	acme := b.newTenant(t, "acme")
	tid := acme.Tenant.ID
	_, err := b.srv.CreateNamespace(ctx, tid, "emails")
	require.NoError(t, err)
	base := "/internal/v1/tenants/" + tid + "/keys"

	r := gw.do(t, http.MethodPost, base, "", KeyRequest{Name: "ci", Role: "producer", Namespaces: []string{"emails"}})
	require.Equal(t, http.StatusCreated, r.status, "body: %s", r.body)
	ci := decodeAs[wire.CreatedKey](t, r)
	require.Regexp(t, `^key_[0-9a-z]{26}$`, ci.ID)
	require.Equal(t, "ci", ci.Name)
	require.Equal(t, "producer", ci.Role)
	require.Equal(t, []string{"emails"}, ci.Namespaces)
	require.NotEmpty(t, ci.Token)
	require.ElementsMatch(t, []string{"id", "key", "name", "description", "role", "namespaces", "created_at"}, keysOf(decodeAs[map[string]any](t, r)))

	bad := []struct {
		body  any
		field string
	}{
		{KeyRequest{Name: "", Role: "producer", Namespaces: []string{"emails"}}, "name"},
		{KeyRequest{Name: "bad/name", Role: "producer", Namespaces: []string{"emails"}}, "name"},
		{KeyRequest{Name: "x", Role: "superuser", Namespaces: []string{"emails"}}, "role"},
		{KeyRequest{Name: "x", Role: "operator", Namespaces: []string{"emails"}}, "role"},
		{KeyRequest{Name: "x", Role: "viewer"}, "namespaces"},
		{KeyRequest{Name: "x", Role: "viewer", Namespaces: []string{}}, "namespaces"},
		{KeyRequest{Name: "x", Role: "viewer", Namespaces: []string{"nope"}}, "namespaces"},
		{KeyRequest{Name: "x", Role: "viewer", Namespaces: []string{"emails", "emails"}}, "namespaces"},
		{KeyRequest{Name: "x", Role: "viewer", Namespaces: []string{"*", "emails"}}, "namespaces"},
		{KeyRequest{Name: "x", Role: "viewer", Namespaces: []string{"BAD"}}, "namespaces"},
		{KeyRequest{Name: "x", Role: "viewer", Namespaces: manyNamespaces(service.MaxKeyNamespaces + 1)}, "namespaces"},
	}
	for _, c := range bad {
		requireError(t, gw.do(t, http.MethodPost, base, "", c.body), 400, "bad_request", c.field)
	}
	requireError(t, gw.do(t, http.MethodPost, base, "", `{"name":"x","role":"viewer","namespaces":"emails"}`), 400, "invalid_json")
	requireError(t, gw.do(t, http.MethodPost, "/internal/v1/tenants/"+unknownTID+"/keys", "", KeyRequest{Name: "x", Role: "viewer", Namespaces: []string{"*"}}), 404, "not_found")

	r = gw.do(t, http.MethodGet, base, "", nil)
	require.Equal(t, http.StatusOK, r.status)
	require.NotContains(t, string(r.body), ci.Token, "a key's token is never listed")
	require.NotContains(t, string(r.body), acme.OwnerKey)
	keys := decodeAs[wire.KeyList](t, r).Keys
	require.Len(t, keys, 2, "the owner key and ci; rejected requests created nothing")
	require.Equal(t, "owner", keys[0].Name)
	require.Equal(t, []string{"*"}, keys[0].Namespaces)
	require.Equal(t, ci.Key, keys[1])
	requireError(t, gw.do(t, http.MethodGet, "/internal/v1/tenants/"+unknownTID+"/keys", "", nil), 404, "not_found")

	r = gw.do(t, http.MethodDelete, base+"/"+ci.ID, "", nil)
	require.Equal(t, http.StatusNoContent, r.status, "body: %s", r.body)
	require.Empty(t, r.body)
	require.Equal(t, http.StatusNoContent, gw.do(t, http.MethodDelete, base+"/"+ci.ID, "", nil).status, "revoking twice is fine")
	requireError(t, gw.do(t, http.MethodDelete, base+"/key_01hzzzzzzzzzzzzzzzzzzzzzzz", "", nil), 404, "not_found")
	requireError(t, gw.do(t, http.MethodDelete, base+"/garbage", "", nil), 404, "not_found")

	r = gw.do(t, http.MethodGet, base, "", nil)
	keys = decodeAs[wire.KeyList](t, r).Keys
	require.NotNil(t, keys[1].RevokedAt)
	require.Nil(t, keys[0].RevokedAt)
	require.NotContains(t, strings.SplitN(string(r.body), ci.ID, 2)[0], "revoked_at", "only revoked keys carry revoked_at")
}

func TestHTTPKeyExpiry(t *testing.T) {
	t.Parallel()
	b := setup(t)
	gw := b.as(t, pkitest.Gateway)
	acme := b.newTenant(t, "acme")
	base := "/internal/v1/tenants/" + acme.Tenant.ID + "/keys"
	body := func(exp any) map[string]any {
		return map[string]any{"name": "short", "role": "worker", "namespaces": []string{"default"}, "expires_at": exp}
	}

	now := time.Now()
	bad := []any{
		now.Add(-time.Minute).Format(time.RFC3339),
		now.Format(time.RFC3339Nano),
		now.AddDate(10, 0, 1).Format(time.RFC3339),
		"tomorrow",
		"2030-01-01",
		12345,
	}
	for _, exp := range bad {
		requireError(t, gw.do(t, http.MethodPost, base, "", body(exp)), 400, "bad_request", "expires_at")
	}

	want := now.Add(time.Hour).Truncate(time.Second).UTC()
	sent := want.Add(300 * time.Millisecond).In(time.FixedZone("", 2*60*60)).Format(time.RFC3339Nano)
	r := gw.do(t, http.MethodPost, base, "", body(sent))
	require.Equal(t, http.StatusCreated, r.status, "body: %s", r.body)
	k := decodeAs[wire.CreatedKey](t, r)
	require.NotNil(t, k.ExpiresAt)
	require.Equal(t, want, *k.ExpiresAt, "kept to the whole second, in UTC")
	require.Contains(t, string(r.body), `"expires_at":"`+want.Format(time.RFC3339)+`"`)

	claims, err := b.srv.VerifyKey(context.Background(), k.Token)
	require.NoError(t, err)
	require.NotNil(t, claims.ExpiresAt)
	require.Equal(t, want, claims.ExpiresAt.UTC(), "the token's exp is the stored expiry")

	r = gw.do(t, http.MethodPost, base, "", body(nil))
	require.Equal(t, http.StatusCreated, r.status, "null is no expiry; body: %s", r.body)
	forever := decodeAs[wire.CreatedKey](t, r)
	require.Nil(t, forever.ExpiresAt)
	require.NotContains(t, string(r.body), "expires_at")
	claims, err = b.srv.VerifyKey(context.Background(), forever.Token)
	require.NoError(t, err)
	require.Nil(t, claims.ExpiresAt)

	r = gw.do(t, http.MethodGet, base, "", nil)
	require.Equal(t, http.StatusOK, r.status)
	keys := decodeAs[wire.KeyList](t, r).Keys
	require.Len(t, keys, 3, "the owner key, short and forever; rejected requests created nothing")
	require.Equal(t, k.Key, keys[1])
	require.Nil(t, keys[2].ExpiresAt)
	require.Equal(t, 1, strings.Count(string(r.body), "expires_at"), "only keys that expire carry expires_at")
}

func TestHTTPRevocationsVersionIncrements(t *testing.T) {
	t.Parallel()
	b := setup(t)
	gw := b.as(t, pkitest.Gateway)
	ctx := context.Background()
	acme := b.newTenant(t, "acme")
	tid := acme.Tenant.ID

	r := gw.do(t, http.MethodGet, "/internal/v1/revocations", "", nil)
	require.Equal(t, http.StatusOK, r.status)
	require.JSONEq(t, `{"version":0,"revoked":[]}`, string(r.body))

	var ids []string
	for i := range 3 {
		k, err := b.srv.CreateKey(ctx, tid, KeyRequest{Name: fmt.Sprintf("k%d", i), Role: "worker", Namespaces: []string{"default"}})
		require.NoError(t, err)
		ids = append(ids, k.ID)
	}
	for i, id := range ids {
		require.Equal(t, http.StatusNoContent, gw.do(t, http.MethodDelete, "/internal/v1/tenants/"+tid+"/keys/"+id, "", nil).status)
		rev := decodeAs[wire.Revocations](t, gw.do(t, http.MethodGet, "/internal/v1/revocations", "", nil))
		require.Equal(t, uint64(i+1), rev.Version)
		require.Equal(t, ids[:i+1], rev.Revoked)
	}
	gw.do(t, http.MethodDelete, "/internal/v1/tenants/"+tid+"/keys/"+ids[0], "", nil)
	rev := decodeAs[wire.Revocations](t, gw.do(t, http.MethodGet, "/internal/v1/revocations", "", nil))
	require.Equal(t, uint64(3), rev.Version, "revoking a revoked key does not bump the version")
}

func TestHTTPTenantIsolation(t *testing.T) {
	t.Parallel()
	b := setup(t)
	gw := b.as(t, pkitest.Gateway)
	ctx := context.Background()
	acme := b.newTenant(t, "acme")
	bravo := b.newTenant(t, "bravo")
	a, bt := acme.Tenant.ID, bravo.Tenant.ID
	_, err := b.srv.CreateNamespace(ctx, bt, "secret-ns")
	require.NoError(t, err)
	bkey, err := b.srv.CreateKey(ctx, bt, KeyRequest{Name: "b", Role: "admin", Namespaces: []string{"secret-ns"}})
	require.NoError(t, err)

	// A's paths never show B's namespaces or keys.
	r := gw.do(t, http.MethodGet, "/internal/v1/tenants/"+a+"/namespaces", "", nil)
	require.NotContains(t, string(r.body), "secret-ns")
	requireError(t, gw.do(t, http.MethodGet, "/internal/v1/tenants/"+a+"/namespaces/secret-ns", "", nil), 404, "not_found")
	r = gw.do(t, http.MethodGet, "/internal/v1/tenants/"+a+"/keys", "", nil)
	require.NotContains(t, string(r.body), bkey.ID)
	require.Len(t, decodeAs[wire.KeyList](t, r).Keys, 1)

	// A cannot delete B's key, nor use B's namespace in a key.
	requireError(t, gw.do(t, http.MethodDelete, "/internal/v1/tenants/"+a+"/keys/"+bkey.ID, "", nil), 404, "not_found")
	requireError(t, gw.do(t, http.MethodPost, "/internal/v1/tenants/"+a+"/keys", "",
		KeyRequest{Name: "sneaky", Role: "viewer", Namespaces: []string{"secret-ns"}}), 400, "bad_request", "namespaces")
	_, err = b.srv.VerifyKey(ctx, bkey.Key)
	require.NoError(t, err, "B's key is still good")

	// Same namespace name in both tenants is two namespaces.
	_, err = b.srv.CreateNamespace(ctx, a, "secret-ns")
	require.NoError(t, err)
	rev := decodeAs[wire.Revocations](t, gw.do(t, http.MethodGet, "/internal/v1/revocations", "", nil))
	require.Zero(t, rev.Version)
}

func manyNamespaces(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("ns-%d", i)
	}
	return out
}

func TestHealthAndReadiness(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for _, path := range []string{"/healthz", "/readyz"} {
		r := b.do(t, http.MethodGet, path, "", nil)
		require.Equal(t, http.StatusOK, r.status, "%s: %s", path, r.body)
	}
}

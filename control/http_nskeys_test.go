package control

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/pki/pkitest"
	"github.com/jobbie/jobbie/wire"
)

func TestHTTPNamespaceSettings(t *testing.T) {
	t.Parallel()
	b := setup(t)
	gw := b.as(t, pkitest.Gateway)
	tid := b.newTenant(t, "acme").Tenant.ID
	base := "/internal/v1/tenants/" + tid + "/namespaces"

	r := gw.do(t, http.MethodPost, base, "", map[string]any{"name": "emails", "description": "outgoing mail", "retention": "168h0m0s",
		"deletion_protection": true})
	require.Equal(t, http.StatusCreated, r.status, "body: %s", r.body)
	require.JSONEq(t, `{"name":"emails","description":"outgoing mail","retention":"168h","deletion_protection":true,`+
		`"created_at":"`+decodeAs[wire.Namespace](t, r).CreatedAt.Format(time.RFC3339Nano)+`","shard_id":"s2"}`, string(r.body))

	for _, bad := range []struct {
		body  any
		field string
	}{
		{map[string]any{"name": "a", "description": strings.Repeat("x", wire.MaxDescription+1)}, "description"},
		{`{"name":"a","description":"bad \u0000 byte"}`, "description"},
		{map[string]any{"name": "a", "retention": "59s"}, "retention"},
		{map[string]any{"name": "a", "retention": "87601h"}, "retention"},
		{map[string]any{"name": "a", "retention": "a week"}, "retention"},
		{map[string]any{"name": "a", "retention": true}, "retention"},
		{map[string]any{"name": "a", "deletion_protection": "yes"}, "deletion_protection"},
		{map[string]any{"name": "a", "color": "red"}, "color"},
	} {
		r := gw.do(t, http.MethodPost, base, "", bad.body)
		require.Equal(t, http.StatusBadRequest, r.status, "%v: %s", bad.body, r.body)
		require.Equal(t, bad.field, decodeAs[wire.ErrorBody](t, r).Error.Field, "%v", bad.body)
	}
	r = gw.do(t, http.MethodPost, base, "", map[string]any{"name": "bulk", "retention": 3600})
	require.Equal(t, http.StatusCreated, r.status, "a number is seconds; body: %s", r.body)
	require.Equal(t, "1h", decodeAs[wire.Namespace](t, r).Retention)

	// PATCH changes only what it names; null puts a field back to its default.
	r = gw.do(t, http.MethodPatch, base+"/emails", "", map[string]any{"description": "mail, sent"})
	require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)
	ns := decodeAs[wire.Namespace](t, r)
	require.Equal(t, wire.Namespace{Name: "emails", Description: "mail, sent", Retention: "168h", DeletionProtection: true, CreatedAt: ns.CreatedAt}, ns)
	r = gw.do(t, http.MethodPatch, base+"/emails", "", map[string]any{"retention": nil, "description": nil})
	require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)
	ns = decodeAs[wire.Namespace](t, r)
	require.Equal(t, "", ns.Description)
	require.Equal(t, "", ns.Retention)
	require.NotContains(t, string(r.body), "retention", "no retention, no field")
	require.True(t, ns.DeletionProtection)
	r = gw.do(t, http.MethodPatch, base+"/emails", "", map[string]any{"retention": "90m"})
	require.Equal(t, "1h30m", decodeAs[wire.Namespace](t, r).Retention, "the API's own duration form")

	before := gw.do(t, http.MethodGet, base+"/emails", "", nil).body
	for _, bad := range []struct {
		body  any
		field string
	}{
		{map[string]any{"description": 7}, "description"},
		{map[string]any{"description": strings.Repeat("é", wire.MaxDescription/2+1)}, "description"},
		{map[string]any{"retention": "0s"}, "retention"},
		{map[string]any{"retention": -60}, "retention"},
		{map[string]any{"deletion_protection": "off", "description": "x"}, "deletion_protection"},
		{map[string]any{"deletion_protection": false, "shard_id": "s1"}, "shard_id"},
		{map[string]any{"name": "other"}, "name"},
	} {
		r := gw.do(t, http.MethodPatch, base+"/emails", "", bad.body)
		require.Equal(t, http.StatusBadRequest, r.status, "%v: %s", bad.body, r.body)
		require.Equal(t, bad.field, decodeAs[wire.ErrorBody](t, r).Error.Field, "%v", bad.body)
	}
	require.Equal(t, string(before), string(gw.do(t, http.MethodGet, base+"/emails", "", nil).body), "a refused change changes nothing")
	requireError(t, gw.do(t, http.MethodPatch, base+"/emails", "", ""), 400, "invalid_json")
	requireError(t, gw.do(t, http.MethodPatch, base+"/nope", "", map[string]any{"description": "x"}), 404, "not_found")
	requireError(t, gw.do(t, http.MethodPatch, base+"/Not_A_Name", "", map[string]any{"description": "x"}), 404, "not_found")

	// Deletion protection holds until it is switched off.
	requireError(t, gw.do(t, http.MethodDelete, base+"/emails", "", nil), 409, "deletion_protected")
	require.Equal(t, http.StatusOK, gw.do(t, http.MethodGet, base+"/emails", "", nil).status)
	r = gw.do(t, http.MethodPatch, base+"/emails", "", map[string]any{"deletion_protection": false})
	require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)
	r = gw.do(t, http.MethodDelete, base+"/emails", "", nil)
	require.Equal(t, http.StatusNoContent, r.status, "body: %s", r.body)
	requireError(t, gw.do(t, http.MethodGet, base+"/emails", "", nil), 404, "not_found")
	requireError(t, gw.do(t, http.MethodDelete, base+"/emails", "", nil), 404, "not_found")
	names := decodeAs[struct{ Namespaces []wire.Namespace }](t, gw.do(t, http.MethodGet, base, "", nil)).Namespaces
	require.Len(t, names, 2, "default and bulk")
}

func TestHTTPNamespaceSettingsAreTenantIsolated(t *testing.T) {
	t.Parallel()
	b := setup(t)
	gw := b.as(t, pkitest.Gateway)
	a := b.newTenant(t, "acme").Tenant.ID
	bt := b.newTenant(t, "bravo").Tenant.ID
	_, err := b.srv.CreateNamespace(context.Background(), bt, "secret-ns")
	require.NoError(t, err)

	requireError(t, gw.do(t, http.MethodPatch, "/internal/v1/tenants/"+a+"/namespaces/secret-ns", "", map[string]any{"description": "x"}), 404, "not_found")
	requireError(t, gw.do(t, http.MethodDelete, "/internal/v1/tenants/"+a+"/namespaces/secret-ns", "", nil), 404, "not_found")
	ns, err := b.srv.Namespace(context.Background(), bt, "secret-ns")
	require.NoError(t, err)
	require.Empty(t, ns.Description)
}

func TestHTTPKeyGetAndRotate(t *testing.T) {
	t.Parallel()
	clk := clockwork.NewFakeClockAt(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	b := setup(t, func(c *Config) { c.Clock = clk })
	gw := b.as(t, pkitest.Gateway)
	ctx := context.Background()
	acme := b.newTenant(t, "acme")
	tid := acme.Tenant.ID
	bravo := b.newTenant(t, "bravo")
	base := "/internal/v1/tenants/" + tid + "/keys"

	r := gw.do(t, http.MethodPost, base, "", map[string]any{"name": "ci", "role": "producer", "namespaces": []string{"default"},
		"description": "CI pipeline"})
	require.Equal(t, http.StatusCreated, r.status, "body: %s", r.body)
	ci := decodeAs[wire.CreatedKey](t, r)
	require.Equal(t, "CI pipeline", ci.Description)
	r = gw.do(t, http.MethodPost, base, "", map[string]any{"name": "x", "role": "producer", "namespaces": []string{"default"},
		"description": strings.Repeat("x", wire.MaxDescription+1)})
	requireError(t, r, 400, "bad_request", "description")

	r = gw.do(t, http.MethodGet, base+"/"+ci.ID, "", nil)
	require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)
	require.Equal(t, ci.Key, decodeAs[wire.Key](t, r))
	require.NotContains(t, string(r.body), ci.Token, "never the secret")
	require.NotContains(t, string(r.body), "last_used_at", "not used yet")
	requireError(t, gw.do(t, http.MethodGet, base+"/key_01hzzzzzzzzzzzzzzzzzzzzzzz", "", nil), 404, "not_found")
	requireError(t, gw.do(t, http.MethodGet, base+"/garbage", "", nil), 404, "not_found")
	requireError(t, gw.do(t, http.MethodGet, "/internal/v1/tenants/"+bravo.Tenant.ID+"/keys/"+ci.ID, "", nil), 404, "not_found")
	requireError(t, gw.do(t, http.MethodPost, "/internal/v1/tenants/"+bravo.Tenant.ID+"/keys/"+ci.ID+"/rotate", "", nil), 404, "not_found")

	for _, bad := range []any{map[string]any{"grace_period": "-1s"}, map[string]any{"grace_period": "169h"},
		map[string]any{"grace_period": "soon"}, map[string]any{"grace_period": []int{1}}} {
		requireError(t, gw.do(t, http.MethodPost, base+"/"+ci.ID+"/rotate", "", bad), 400, "bad_request", "grace_period")
	}
	requireError(t, gw.do(t, http.MethodPost, base+"/"+ci.ID+"/rotate", "", map[string]any{"grace": "1h"}), 400, "bad_request", "grace")
	_, err := b.srv.VerifyKey(ctx, ci.Token)
	require.NoError(t, err, "refused rotations changed nothing")

	r = gw.do(t, http.MethodPost, base+"/"+ci.ID+"/rotate", "", map[string]any{"grace_period": "1h"})
	require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)
	rot := decodeAs[wire.RotatedKey](t, r)
	require.Equal(t, ci.ID, rot.ID)
	require.Equal(t, ci.Name, rot.Name)
	require.Equal(t, ci.Role, rot.Role)
	require.Equal(t, clk.Now().Add(time.Hour), rot.PreviousKeyValidUntil)
	require.Equal(t, clk.Now(), *rot.RotatedAt)
	require.NotEqual(t, ci.Token, rot.Token)
	claims, err := b.srv.VerifyKey(ctx, rot.Token)
	require.NoError(t, err)
	require.Equal(t, ci.ID, claims.Subject)
	require.Equal(t, "1", claims.ID, "the token carries its generation")
	_, err = b.srv.VerifyKey(ctx, ci.Token)
	require.NoError(t, err, "the old secret works during its grace period")
	rev := decodeAs[wire.Revocations](t, gw.do(t, http.MethodGet, "/internal/v1/revocations", "", nil))
	require.Equal(t, []wire.KeySecrets{{KeyID: ci.ID, Generation: 1, Grace: []wire.GraceSecret{{Generation: 0, Until: rot.PreviousKeyValidUntil}}}}, rev.Rotated)

	clk.Advance(time.Hour)
	_, err = b.srv.VerifyKey(ctx, ci.Token)
	require.Equal(t, apierr.Unauthenticated, apierr.CodeOf(err), "and not after: %v", err)
	_, err = b.srv.VerifyKey(ctx, rot.Token)
	require.NoError(t, err)

	r = gw.do(t, http.MethodPost, base+"/"+ci.ID+"/rotate", "", nil)
	require.Equal(t, http.StatusOK, r.status, "no body: grace 0; body: %s", r.body)
	again := decodeAs[wire.RotatedKey](t, r)
	require.Equal(t, clk.Now(), again.PreviousKeyValidUntil)
	_, err = b.srv.VerifyKey(ctx, rot.Token)
	require.Equal(t, apierr.Unauthenticated, apierr.CodeOf(err), "grace 0: the old secret stops at once")

	require.Equal(t, http.StatusNoContent, gw.do(t, http.MethodDelete, base+"/"+ci.ID, "", nil).status)
	requireError(t, gw.do(t, http.MethodPost, base+"/"+ci.ID+"/rotate", "", nil), 409, "conflict")
	_, err = b.srv.VerifyKey(ctx, again.Token)
	require.Equal(t, apierr.Unauthenticated, apierr.CodeOf(err))
}

func TestHTTPKeyUsage(t *testing.T) {
	t.Parallel()
	b := setup(t)
	gw := b.as(t, pkitest.Gateway)
	acme := b.newTenant(t, "acme")
	tid := acme.Tenant.ID
	keys, err := b.srv.Keys(context.Background(), tid)
	require.NoError(t, err)
	owner := keys[0].ID
	seen := time.Now().Add(-time.Minute).UTC().Truncate(time.Millisecond)

	r := gw.do(t, http.MethodPost, "/internal/v1/keys/used", "", wire.KeyUsage{Keys: []wire.KeyUse{
		{TenantID: tid, KeyID: owner, At: seen},
		{TenantID: unknownTID, KeyID: owner, At: seen},
	}})
	require.Equal(t, http.StatusNoContent, r.status, "body: %s", r.body)
	k := decodeAs[wire.Key](t, gw.do(t, http.MethodGet, "/internal/v1/tenants/"+tid+"/keys/"+owner, "", nil))
	require.NotNil(t, k.LastUsedAt)
	require.Equal(t, seen, *k.LastUsedAt)
	list := decodeAs[wire.KeyList](t, gw.do(t, http.MethodGet, "/internal/v1/tenants/"+tid+"/keys", "", nil))
	require.Equal(t, seen, *list.Keys[0].LastUsedAt)

	for _, bad := range []struct {
		body  any
		field string
	}{
		{wire.KeyUsage{Keys: []wire.KeyUse{{TenantID: "nope", KeyID: owner, At: seen}}}, "keys[0].tenant_id"},
		{wire.KeyUsage{Keys: []wire.KeyUse{{TenantID: tid, KeyID: owner, At: seen}, {TenantID: tid, KeyID: "k", At: seen}}}, "keys[1].key_id"},
		{wire.KeyUsage{Keys: []wire.KeyUse{{TenantID: tid, KeyID: owner}}}, "keys[0].at"},
		{wire.KeyUsage{Keys: make([]wire.KeyUse, wire.MaxKeyUses+1)}, "keys"},
	} {
		requireError(t, gw.do(t, http.MethodPost, "/internal/v1/keys/used", "", bad.body), 400, "bad_request", bad.field)
	}
	full := wire.KeyUsage{Keys: make([]wire.KeyUse, wire.MaxKeyUses)}
	for i := range full.Keys {
		full.Keys[i] = wire.KeyUse{TenantID: unknownTID, KeyID: "key_01hzzzzzzzzzzzzzzzzzzzzzzz", At: time.Now().Add(-123456789 * time.Nanosecond)}
	}
	r = gw.do(t, http.MethodPost, "/internal/v1/keys/used", "", full)
	require.Equal(t, http.StatusNoContent, r.status, "a full report fits control's body limit: %s", r.body)
	requireError(t, b.do(t, http.MethodPost, "/internal/v1/keys/used", acme.OwnerKey, wire.KeyUsage{}), 401, "unauthenticated")
	requireError(t, b.as(t, pkitest.Shard("s1", "n1")).do(t, http.MethodPost, "/internal/v1/keys/used", "", wire.KeyUsage{}), 403, "forbidden")
}

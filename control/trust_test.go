package control

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/control/state"
	"github.com/jobbie/jobbie/internal/pki"
	"github.com/jobbie/jobbie/internal/pki/pkitest"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// trustTenant is a tenant of the trust bundle tests: its self-hosted
// shard, and its keys: one revoked, one rotated, one untouched.
type trustTenant struct {
	tid, shard                  string
	revoked, rotated, untouched state.CreatedKey
}

// newTrustTenant creates tenant name with a custom role, three keys
// (revoking the first, rotating the second with a grace period), a
// self-hosted shard holding namespaces onprem (namespaces), and a hosted
// namespace "cloud" besides its default one.
func newTrustTenant(t *testing.T, b *bundle, name string, onprem ...string) trustTenant {
	t.Helper()
	ctx := context.Background()
	gw := b.as(t, pkitest.Gateway)
	tt := trustTenant{tid: b.newTenant(t, name).Tenant.ID}
	base := "/internal/v1/tenants/" + tt.tid
	tt.shard = mintShard(t, gw, tt.tid, "dc")
	for _, ns := range onprem {
		r := gw.do(t, http.MethodPost, base+"/namespaces", "", map[string]any{"name": ns, "shard": tt.shard})
		require.Equal(t, http.StatusCreated, r.status, "%s", r.body)
	}
	_, err := b.srv.CreateNamespace(ctx, tt.tid, "cloud")
	require.NoError(t, err)
	r := gw.do(t, http.MethodPost, base+"/roles", "", supportRole())
	require.Equal(t, http.StatusCreated, r.status, "%s", r.body)
	keys := make([]state.CreatedKey, 3)
	for i := range keys {
		keys[i], err = b.srv.CreateKey(ctx, tt.tid, KeyRequest{Name: "k", Role: "producer", Namespaces: []string{"default"}})
		require.NoError(t, err)
	}
	tt.revoked, tt.rotated, tt.untouched = keys[0], keys[1], keys[2]
	require.NoError(t, b.srv.RevokeKey(ctx, tt.tid, tt.revoked.ID))
	_, err = b.srv.RotateKey(ctx, tt.tid, tt.rotated.ID, wire.RotateKeyRequest{GracePeriod: json.RawMessage(`"1h"`)})
	require.NoError(t, err)
	return tt
}

// mintShard creates a self-hosted shard of tenant tid (no node needs to
// join for namespaces to be placed on it) and returns its id. Asked
// again while the answer is a 503 with Retry-After (an election in a
// group): a join token whose answer was lost was never seen, so no node
// can use it; its shard stays empty.
func mintShard(t *testing.T, gw *bundle, tid, name string) string {
	t.Helper()
	r := gw.settled(t, http.MethodPost, "/internal/v1/tenants/"+tid+"/shards/join-tokens", "", map[string]any{"name": name})
	require.Equal(t, http.StatusCreated, r.status, "%s", r.body)
	return decodeAs[wire.JoinToken](t, r).ShardID
}

func trustPath(tid, sid string) string {
	return "/internal/v1/tenants/" + tid + "/shards/" + sid + "/trust"
}

// trustOf fetches the trust bundle of tenant tid's shard sid.
func trustOf(t *testing.T, gw *bundle, tid, sid string) wire.TrustBundle {
	t.Helper()
	r := readThrough(t, gw, trustPath(tid, sid)) // a group's follower may see an election
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	return decodeAs[wire.TrustBundle](t, r)
}

// verifyWith checks an API key's signature with a JWK set, as a node
// holding only the bundle would.
func verifyWith(t *testing.T, set tenancy.JWKS, token string) {
	t.Helper()
	parts := strings.Split(token, ".")
	require.Len(t, parts, 3)
	head, err := base64.RawURLEncoding.DecodeString(parts[0])
	require.NoError(t, err)
	var h struct{ Kid, Alg string }
	require.NoError(t, json.Unmarshal(head, &h))
	require.Equal(t, "EdDSA", h.Alg)
	i := slices.IndexFunc(set.Keys, func(k tenancy.JWK) bool { return k.Kid == h.Kid })
	require.GreaterOrEqual(t, i, 0, "kid %q is not in the bundle's JWKS", h.Kid)
	require.True(t, set.Keys[i].IsEdDSASigning())
	pub, err := set.Keys[i].PublicKey()
	require.NoError(t, err)
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	require.NoError(t, err)
	require.True(t, ed25519.Verify(pub, []byte(parts[0]+"."+parts[1]), sig))
}

// TestTrustBundleHoldsTheTenantsOwn: a bundle holds the signing keys'
// JWKS, its tenant's revocations, roles and namespaces on the shard, and
// nothing of another tenant's.
func TestTrustBundleHoldsTheTenantsOwn(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	gw := b.as(t, pkitest.Gateway)
	a := newTrustTenant(t, b, "acme", "onprem1", "onprem2")
	o := newTrustTenant(t, b, "globex", "theirs")

	before := time.Now().UTC()
	got := trustOf(t, gw, a.tid, a.shard)
	require.Equal(t, a.tid, got.TenantID)
	require.Equal(t, a.shard, got.ShardID)
	require.False(t, got.IssuedAt.Before(before.Add(-time.Second)) || got.IssuedAt.After(time.Now().Add(time.Second)), "issued_at %s", got.IssuedAt)
	raw := decodeAs[map[string]any](t, gw.do(t, http.MethodGet, trustPath(a.tid, a.shard), "", nil))
	require.True(t, strings.HasSuffix(raw["issued_at"].(string), "Z"), "issued_at in UTC: %v", raw["issued_at"])

	// JWKS: what /control/v1/jwks publishes, and it verifies the tenant's keys.
	require.JSONEq(t, string(b.do(t, http.MethodGet, "/control/v1/jwks", "", nil).body), string(got.JWKS))
	var set tenancy.JWKS
	require.NoError(t, json.Unmarshal(got.JWKS, &set))
	require.Len(t, set.Keys, 1)
	verifyWith(t, set, a.untouched.Key)

	// Revocations: the tenant's only.
	rev := got.Revocations
	require.Equal(t, []string{a.revoked.ID}, rev.Revoked)
	require.Len(t, rev.Rotated, 1)
	require.Equal(t, a.rotated.ID, rev.Rotated[0].KeyID)
	require.Equal(t, uint64(1), rev.Rotated[0].Generation)
	require.Len(t, rev.Rotated[0].Grace, 1)
	global, err := b.srv.Revocations(ctx)
	require.NoError(t, err)
	require.Contains(t, global.Rotated, rev.Rotated[0], "the same entry as the gateways' list")
	require.Contains(t, global.Revoked, o.revoked.ID)
	require.Empty(t, rev.SigningKeys)
	require.Equal(t, []wire.RolesVersion{{TenantID: a.tid, Version: 1}}, rev.Roles)
	require.NotZero(t, rev.Version)
	require.NotEqual(t, global.Version, rev.Version)
	body := string(gw.do(t, http.MethodGet, trustPath(a.tid, a.shard), "", nil).body)
	for _, theirs := range []string{o.tid, o.shard, o.revoked.ID, o.rotated.ID, o.untouched.ID, "theirs"} {
		require.NotContains(t, body, theirs)
	}

	// Roles: as the roles endpoint answers them.
	roles := decodeAs[wire.TenantRoles](t, gw.do(t, http.MethodGet, "/internal/v1/tenants/"+a.tid+"/roles", "", nil))
	require.Equal(t, roles, got.Roles)
	require.Len(t, got.Roles.Roles, 1)
	require.Equal(t, "support", got.Roles.Roles[0].Name)

	// Namespaces: the tenant's on this shard, without addresses.
	var names []string
	for _, ns := range got.Namespaces {
		names = append(names, ns.Name)
		require.Equal(t, a.shard, ns.ShardID)
		require.Equal(t, a.shard, ns.Shard)
		require.Empty(t, ns.ShardAddr)
		require.Empty(t, ns.ShardMembers)
		require.False(t, ns.Moving)
	}
	require.Equal(t, []string{"onprem1", "onprem2"}, names)
	require.Equal(t, "theirs", trustOf(t, gw, o.tid, o.shard).Namespaces[0].Name)

	// A shard with nothing on it, of a tenant that revoked nothing: empty
	// lists, not nulls.
	fresh := b.newTenant(t, "initech").Tenant.ID
	sid := mintShard(t, gw, fresh, "empty")
	raw = decodeAs[map[string]any](t, gw.do(t, http.MethodGet, trustPath(fresh, sid), "", nil))
	require.Equal(t, []any{}, raw["namespaces"])
	require.Equal(t, []any{}, raw["revocations"].(map[string]any)["revoked"])
	require.Equal(t, []any{}, raw["roles"].(map[string]any)["roles"])
	require.NotContains(t, raw["revocations"], "roles")
}

// TestTrustBundleVersionFollowsTheTenantsContentOnly: the version moves
// with each change of the tenant's revocations, roles or the signing
// keys, and never with another tenant's.
func TestTrustBundleVersionFollowsTheTenantsContentOnly(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	gw := b.as(t, pkitest.Gateway)
	a := newTrustTenant(t, b, "acme", "onprem")
	o := newTrustTenant(t, b, "globex", "theirs")
	version := func() uint64 { return trustOf(t, gw, a.tid, a.shard).Revocations.Version }
	globalVersion := func() uint64 {
		rev, err := b.srv.Revocations(ctx)
		require.NoError(t, err)
		return rev.Version
	}
	v := version()
	require.Equal(t, v, version(), "the same content, the same version")

	// Another tenant's revocation, rotation and role change move the
	// global list, not this bundle.
	g := globalVersion()
	ov := trustOf(t, gw, o.tid, o.shard).Revocations.Version
	require.NoError(t, b.srv.RevokeKey(ctx, o.tid, o.untouched.ID))
	_, err := b.srv.RotateKey(ctx, o.tid, o.rotated.ID, wire.RotateKeyRequest{})
	require.NoError(t, err)
	r := gw.do(t, http.MethodPut, "/internal/v1/tenants/"+o.tid+"/roles/support", "", map[string]any{"description": "changed",
		"permissions": []map[string]any{{"actions": []string{"job.read"}, "namespaces": []string{"*"}, "queues": []string{"*"}}}})
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	require.NotEqual(t, g, globalVersion())
	require.NotEqual(t, ov, trustOf(t, gw, o.tid, o.shard).Revocations.Version)
	require.Equal(t, v, version())

	seen := map[uint64]bool{v: true}
	changed := func(what string) {
		t.Helper()
		nv := version()
		require.False(t, seen[nv], "after %s the version %d is one seen before", what, nv)
		seen[nv] = true
	}
	require.NoError(t, b.srv.RevokeKey(ctx, a.tid, a.untouched.ID))
	changed("a revocation")
	_, err = b.srv.RotateKey(ctx, a.tid, a.rotated.ID, wire.RotateKeyRequest{})
	require.NoError(t, err)
	changed("a rotation")
	require.Equal(t, http.StatusOK, gw.do(t, http.MethodDelete, "/internal/v1/tenants/"+a.tid+"/roles/support", "", nil).status)
	changed("a role's deletion")
	r = b.do(t, http.MethodPost, "/control/v1/signing-keys/rotate", b.op, map[string]any{"retire_after": "1h"})
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	changed("a signing key rotation")
	got := trustOf(t, gw, a.tid, a.shard)
	require.Len(t, got.Revocations.SigningKeys, 1)
	var set tenancy.JWKS
	require.NoError(t, json.Unmarshal(got.JWKS, &set))
	require.Len(t, set.Keys, 2, "the retiring key verifies until it retires")
	verifyWith(t, set, a.untouched.Key) // signed by the key now retiring
}

// errorShape is an error body without its request id, with the shard id
// it names replaced, to compare two refusals.
func errorShape(t *testing.T, r response, sid string) map[string]any {
	t.Helper()
	require.Equal(t, http.StatusNotFound, r.status, "%s", r.body)
	var body map[string]map[string]any
	require.NoError(t, json.Unmarshal(r.body, &body), "%s", r.body)
	e := body["error"]
	require.NotEmpty(t, e["request_id"])
	delete(e, "request_id")
	e["message"] = strings.ReplaceAll(e["message"].(string), sid, "<shard>")
	return e
}

// TestTrustBundleRefusals: another tenant's shard, a hosted one, a
// revoked or unknown one all read the same 404; the route is the
// gateways' alone.
func TestTrustBundleRefusals(t *testing.T) {
	t.Parallel()
	b := setup(t)
	gw := b.as(t, pkitest.Gateway)
	a := b.newTenant(t, "acme").Tenant.ID
	o := b.newTenant(t, "globex").Tenant.ID
	mine, spare, theirs := mintShard(t, gw, a, "dc"), mintShard(t, gw, a, "spare"), mintShard(t, gw, o, "dc")
	require.Equal(t, http.StatusNoContent, gw.do(t, http.MethodDelete, "/internal/v1/tenants/"+a+"/shards/"+spare, "", nil).status)

	unknown := "sh_01hzzzzzzzzzzzzzzzzzzzzzzz"
	want := errorShape(t, gw.do(t, http.MethodGet, trustPath(a, unknown), "", nil), unknown)
	require.Equal(t, "not_found", want["code"])
	require.Contains(t, want["message"], "<shard>")
	for _, c := range []struct{ tid, sid string }{
		{a, theirs},        // another tenant's
		{o, mine},          // the other way round
		{a, "s1"},          // hosted
		{a, spare},         // revoked
		{unknownTID, mine}, // unknown tenant
		{"nonsense", mine}, // malformed tenant
		{a, "-bad"},        // malformed shard
	} {
		require.Equal(t, want, errorShape(t, gw.do(t, http.MethodGet, trustPath(c.tid, c.sid), "", nil), c.sid), "%s %s", c.tid, c.sid)
	}

	path := trustPath(a, mine)
	for _, who := range []pki.Identity{pkitest.Operator, pkitest.Shard("s1", "n1"), pkitest.Metrics, pkitest.Control} {
		for _, tok := range []string{"", b.op} {
			requireError(t, b.as(t, who).do(t, http.MethodGet, path, tok, nil), 403, "forbidden")
		}
	}
	requireError(t, b.do(t, http.MethodGet, path, "", nil), 401, "unauthenticated")
	require.Equal(t, http.StatusOK, gw.do(t, http.MethodGet, path, "", nil).status)
}

// TestTrustBundleThroughAFollower: a follower forwards the gateway's
// request to the leader, as every other tenant read.
func TestTrustBundleThroughAFollower(t *testing.T) {
	g := startGroup(t, 2)
	lead := g.leader(t, "") // control1 bootstrapped, but an election may have moved the lead
	tid := tenantThrough(t, g.on(t, lead, pkitest.Operator), "acme")
	follow := g.on(t, g.followers(lead)[0], pkitest.Gateway)
	sid := mintShard(t, follow, tid, "dc")
	postThrough(t, follow, "/internal/v1/tenants/"+tid+"/namespaces", "onprem", map[string]any{"name": "onprem", "shard": sid}, http.StatusCreated)

	got, want := trustOf(t, follow, tid, sid), trustOf(t, g.on(t, lead, pkitest.Gateway), tid, sid)
	require.Equal(t, []string{"onprem"}, []string{got.Namespaces[0].Name})
	got.IssuedAt, want.IssuedAt = time.Time{}, time.Time{}
	require.Equal(t, want, got)
	requireError(t, readThrough(t, follow, trustPath(tid, "sh_unknown")), 404, "not_found")
	requireError(t, readThrough(t, g.on(t, g.followers(lead)[0], pkitest.Shard("s1", "n1")), trustPath(tid, sid)), 403, "forbidden")
}

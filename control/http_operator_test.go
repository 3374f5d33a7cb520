package control

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/control/api"
	"github.com/jobbie/jobbie/internal/pki/pkitest"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

func TestHTTPCreateTenant(t *testing.T) {
	t.Parallel()
	b := setup(t)

	r := b.do(t, http.MethodPost, "/control/v1/tenants", b.op, map[string]string{"name": "acme"})
	require.Equal(t, http.StatusCreated, r.status, "body: %s", r.body)
	res := decodeAs[wire.CreatedTenant](t, r)
	require.Regexp(t, `^t_[0-9a-z]{26}$`, res.Tenant.ID)
	require.Equal(t, "acme", res.Tenant.Name)
	require.False(t, res.Tenant.CreatedAt.IsZero())
	require.Equal(t, "default", res.Namespace)
	require.NotEmpty(t, res.OwnerKey)
	raw := decodeAs[map[string]any](t, r)
	require.ElementsMatch(t, []string{"tenant", "namespace", "owner_key"}, keysOf(raw))

	requireError(t, b.do(t, http.MethodPost, "/control/v1/tenants", b.op, map[string]string{"name": "acme"}), 409, "conflict")
	requireError(t, b.do(t, http.MethodPost, "/control/v1/tenants", b.op, map[string]string{"name": "Not OK"}), 400, "bad_request", "name")
	requireError(t, b.do(t, http.MethodPost, "/control/v1/tenants", b.op, map[string]string{}), 400, "bad_request", "name")
	requireError(t, b.do(t, http.MethodPost, "/control/v1/tenants", b.op, `{"name":`), 400, "invalid_json")
	requireError(t, b.do(t, http.MethodPost, "/control/v1/tenants", b.op, `{"name":42}`), 400, "invalid_json")
	requireError(t, b.do(t, http.MethodPost, "/control/v1/tenants", b.op, ""), 400, "invalid_json")
	requireError(t, b.do(t, http.MethodPost, "/control/v1/tenants", b.op, `{"name":"other","plan":"pro"}`), 400, "bad_request", "plan")
	// Over the body limit: the server answers 413 and closes the
	// connection without reading the rest, so the client may instead see
	// the connection reset while it is still writing. Either way it is
	// refused, and nothing is created (checked below).
	big := `{"name":"` + strings.Repeat("a", api.MaxBody) + `"}`
	req, err := http.NewRequest(http.MethodPost, b.base+"/control/v1/tenants", strings.NewReader(big))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+b.op)
	if resp, err := b.client.Do(req); err == nil {
		resp.Body.Close()
		require.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode)
	} else {
		require.True(t, strings.Contains(err.Error(), "connection reset") || strings.Contains(err.Error(), "broken pipe"), "%v", err)
	}

	tenants, err := b.srv.Tenants(context.Background())
	require.NoError(t, err)
	require.Len(t, tenants, 1, "failed requests changed nothing")
}

func TestHTTPListTenantsAndShards(t *testing.T) {
	t.Parallel()
	b := setup(t)

	r := b.do(t, http.MethodGet, "/control/v1/tenants", b.op, nil)
	require.Equal(t, http.StatusOK, r.status)
	require.JSONEq(t, `{"tenants":[]}`, string(r.body))

	acme := b.newTenant(t, "acme")
	bravo := b.newTenant(t, "bravo")
	_, err := b.srv.CreateNamespace(context.Background(), acme.Tenant.ID, "emails")
	require.NoError(t, err)

	r = b.do(t, http.MethodGet, "/control/v1/tenants", b.op, nil)
	require.Equal(t, http.StatusOK, r.status)
	list := decodeAs[wire.TenantList](t, r)
	require.Equal(t, []wire.Tenant{
		{ID: acme.Tenant.ID, Name: "acme", CreatedAt: acme.Tenant.CreatedAt},
		{ID: bravo.Tenant.ID, Name: "bravo", CreatedAt: bravo.Tenant.CreatedAt},
	}, list.Tenants)

	r = b.do(t, http.MethodGet, "/control/v1/shards", b.op, nil)
	require.Equal(t, http.StatusOK, r.status)
	require.JSONEq(t, `{"shards":[
		{"id":"s1","addr":"http://127.0.0.1:9001","namespaces":2,"capacity":10000,"static":true,"members":[]},
		{"id":"s2","addr":"http://127.0.0.1:9002","namespaces":1,"capacity":10000,"static":true,"members":[]}]}`, string(r.body))
}

func TestHTTPOperatorAuth(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	tenant := b.newTenant(t, "acme")
	revoked, err := b.srv.IssueOperatorKey(ctx, "old ops")
	require.NoError(t, err)
	claims, err := b.srv.VerifyKey(ctx, revoked)
	require.NoError(t, err)
	require.NoError(t, b.srv.RevokeKey(ctx, "", claims.Subject))

	endpoints := []struct{ method, path string }{
		{http.MethodPost, "/control/v1/tenants"},
		{http.MethodGet, "/control/v1/tenants"},
		{http.MethodGet, "/control/v1/shards"},
		{http.MethodGet, "/control/v1/tenants/" + tenant.Tenant.ID + "/namespaces"},
	}
	// A client certificate, an operator's included, is no operator key.
	certified := []*bundle{b.as(t, pkitest.Operator), b.as(t, pkitest.Gateway), b.as(t, pkitest.Control)}
	for _, e := range endpoints {
		body := map[string]string{"name": "zulu"}
		for _, tok := range []string{"", "not-a-jwt", revoked} {
			requireError(t, b.do(t, e.method, e.path, tok, body), 401, "unauthenticated")
		}
		for _, c := range certified {
			requireError(t, c.do(t, e.method, e.path, "", body), 401, "unauthenticated")
		}
		requireError(t, b.do(t, e.method, e.path, tenant.OwnerKey, body), 403, "forbidden")
	}
	_, err = b.srv.TenantByName(ctx, "zulu")
	require.Error(t, err, "no rejected request created a tenant")
}

func TestHTTPJWKSIsPublicAndUnknownPathsAre404(t *testing.T) {
	t.Parallel()
	b := setup(t)
	r := b.do(t, http.MethodGet, "/control/v1/jwks", "", nil)
	require.Equal(t, http.StatusOK, r.status)
	require.Len(t, decodeAs[tenancy.JWKS](t, r).Keys, 1)
	require.NotEmpty(t, r.header.Get("X-Request-Id"))

	requireError(t, b.do(t, http.MethodGet, "/control/v1/nope", b.op, nil), 404, "not_found")
}

func keysOf(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

func TestHTTPCreateTenantWithoutShardsIsUnavailable(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *Config) { c.Shards = nil })
	r := b.do(t, http.MethodPost, "/control/v1/tenants", b.op, map[string]string{"name": "acme"})
	requireError(t, r, http.StatusServiceUnavailable, "unavailable")
	require.NotEmpty(t, r.header.Get("Retry-After"))
	r = b.do(t, http.MethodGet, "/control/v1/shards", b.op, nil)
	require.JSONEq(t, `{"shards":[]}`, string(r.body))
}

// Control keeps no record of Idempotency-Keys, so its routes refuse one,
// naming it, and create nothing.
func TestHTTPRefusesIdempotencyKeys(t *testing.T) {
	t.Parallel()
	b := setup(t)
	r := b.do(t, http.MethodPost, "/control/v1/tenants", b.op, map[string]string{"name": "acme"}, wire.IdempotencyKeyHeader, "k")
	requireError(t, r, 400, "bad_request", wire.IdempotencyKeyHeader)
	tenants, err := b.srv.Tenants(context.Background())
	require.NoError(t, err)
	require.Empty(t, tenants, "nothing was created")
}

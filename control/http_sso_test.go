package control

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/pki/pkitest"
	"github.com/jobbie/jobbie/wire"
)

// A tenant's SSO configuration through a real control node: kept in the
// replicated state, its secret answered only by the gateway's sign-in
// lookup (never by the configuration's own routes), a role the tenant
// lacks refused naming its field, a domain finding a tenant only while
// one tenant alone lists it.
func TestHTTPSSO(t *testing.T) {
	t.Parallel()
	b := setup(t)
	gw := b.as(t, pkitest.Gateway)
	acme := b.newTenant(t, "acme").Tenant.ID
	other := b.newTenant(t, "other").Tenant.ID
	base := "/internal/v1/tenants/" + acme + "/sso"
	cfg := map[string]any{"issuer_url": "https://login.acme.test", "client_id": "jobbie", "client_secret": "s3cret-value",
		"allowed_domains": []string{"acme.test"}, "group_roles": []map[string]string{{"group": "ops", "role": "admin"}}}

	requireError(t, gw.do(t, http.MethodGet, base, "", nil), 404, "not_found")
	noSecret := map[string]any{"issuer_url": "https://login.acme.test", "client_id": "jobbie", "allowed_domains": []string{"acme.test"}, "default_role": "viewer"}
	requireError(t, gw.do(t, http.MethodPut, base, "", noSecret), 400, "bad_request", "client_secret")
	bad := map[string]any{"issuer_url": "https://login.acme.test", "client_id": "jobbie", "client_secret": "x",
		"allowed_domains": []string{"acme.test"}, "group_roles": []map[string]string{{"group": "ops", "role": "no-such-role"}}}
	requireError(t, gw.do(t, http.MethodPut, base, "", bad), 400, "bad_request", "group_roles[0].role")
	requireError(t, gw.do(t, http.MethodPut, base, "", map[string]any{"issuer_url": "http://x.test"}), 400, "bad_request", "issuer_url")
	requireError(t, gw.do(t, http.MethodGet, base, "", nil), 404, "not_found") // nothing was kept

	r := gw.do(t, http.MethodPut, base, "", cfg)
	require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)
	require.NotContains(t, string(r.body), "s3cret-value")
	put := decodeAs[wire.SSOConfig](t, r)
	require.True(t, put.ClientSecretSet)
	require.Equal(t, "groups", put.GroupsClaim)
	got := decodeAs[wire.SSOConfig](t, gw.do(t, http.MethodGet, base, "", nil))
	require.Equal(t, put, got)

	in := decodeAs[wire.SSOSignIn](t, gw.do(t, http.MethodGet, "/internal/v1/sso?tenant=acme", "", nil))
	require.Equal(t, acme, in.TenantID)
	require.Equal(t, "s3cret-value", in.ClientSecret, "the sign-in lookup alone carries it")
	byID := decodeAs[wire.SSOSignIn](t, gw.do(t, http.MethodGet, "/internal/v1/sso?tenant_id="+acme, "", nil))
	require.Equal(t, in, byID)
	byDomain := decodeAs[wire.SSOSignIn](t, gw.do(t, http.MethodGet, "/internal/v1/sso?domain=acme.test", "", nil))
	require.Equal(t, acme, byDomain.TenantID)
	requireError(t, gw.do(t, http.MethodGet, "/internal/v1/sso?tenant=other", "", nil), 404, "not_found")

	// Another tenant listing the same domain: the domain finds neither.
	r = gw.do(t, http.MethodPut, "/internal/v1/tenants/"+other+"/sso", "", map[string]any{"issuer_url": "https://login.other.test",
		"client_id": "o", "client_secret": "o-secret", "allowed_domains": []string{"acme.test"}, "default_role": "viewer"})
	require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)
	requireError(t, gw.do(t, http.MethodGet, "/internal/v1/sso?domain=acme.test", "", nil), 404, "not_found")

	// A shard's certificate may not read it.
	requireError(t, b.as(t, pkitest.Shard("s1", "n1")).do(t, http.MethodGet, "/internal/v1/sso?tenant=acme", "", nil), 403, "forbidden")

	require.Equal(t, http.StatusNoContent, gw.do(t, http.MethodDelete, base, "", nil).status)
	requireError(t, gw.do(t, http.MethodGet, base, "", nil), 404, "not_found")
	requireError(t, gw.do(t, http.MethodDelete, base, "", nil), 404, "not_found")
	requireError(t, gw.do(t, http.MethodGet, "/internal/v1/sso?tenant=acme", "", nil), 404, "not_found")
}

package gateway

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// /api/v1/sso is the owner's: the client secret is written and kept but
// never answered, logged or recorded; a bad field is a 400 naming it
// and changes nothing; DELETE ends sign-in through the provider.
func TestSSOConfigIsTheOwnersAndKeepsItsSecret(t *testing.T) {
	t.Parallel()
	b, op, logs := ssoSetup(t, "jobbie-config", acmeSSO())
	owner := b.key(t, tenancy.RoleOwner, "default")

	for _, role := range []tenancy.Role{tenancy.RoleAdmin, tenancy.RoleDeveloper, tenancy.RoleViewer} {
		b.do(t, http.MethodGet, "/api/v1/sso", b.key(t, role, "default"), nil).requireError(t, http.StatusForbidden, apierr.Forbidden)
		b.do(t, http.MethodPut, "/api/v1/sso", b.key(t, role, "default"), acmeSSO()).requireError(t, http.StatusForbidden, apierr.Forbidden)
		b.do(t, http.MethodDelete, "/api/v1/sso", b.key(t, role, "default"), nil).requireError(t, http.StatusForbidden, apierr.Forbidden)
	}

	r := b.do(t, http.MethodGet, "/api/v1/sso", owner, nil)
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	require.NotContains(t, string(r.body), ssoSecret)
	var cfg wire.SSOConfig
	r.decode(t, &cfg)
	require.True(t, cfg.ClientSecretSet)
	require.Equal(t, op.issuer, cfg.IssuerURL)
	require.Equal(t, "groups", cfg.GroupsClaim, "the default claim")
	require.Equal(t, wire.SSOCallbackPath, cfg.RedirectPath)

	// A replacement without the secret keeps it.
	next := acmeSSO()
	next.IssuerURL, next.ClientID, next.DefaultRole = op.issuer, "jobbie-config", "developer"
	r = b.do(t, http.MethodPut, "/api/v1/sso", owner, next)
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	require.NotContains(t, string(r.body), ssoSecret)
	require.Equal(t, ssoSecret, b.control.SSOSecret(tenantA))

	// Bad fields: 400 naming each, nothing changed.
	bad := func(field string, change func(*wire.SSORequest)) {
		t.Helper()
		in := next
		in.GroupRoles = append([]wire.SSOGroupRole(nil), next.GroupRoles...)
		change(&in)
		e := b.do(t, http.MethodPut, "/api/v1/sso", owner, in).requireError(t, http.StatusBadRequest, apierr.BadRequest)
		require.Equal(t, field, e.Field, e.Message)
	}
	bad("issuer_url", func(r *wire.SSORequest) { r.IssuerURL = "http://login.example.com" })
	bad("issuer_url", func(r *wire.SSORequest) { r.IssuerURL = "https://login.example.com/?tenant=x" })
	bad("issuer_url", func(r *wire.SSORequest) { r.IssuerURL = "https://login.example.com:22" })
	bad("client_id", func(r *wire.SSORequest) { r.ClientID = "" })
	bad("allowed_domains", func(r *wire.SSORequest) { r.AllowedDomains, r.AllowedGroups = nil, nil })
	bad("allowed_domains[0]", func(r *wire.SSORequest) { r.AllowedDomains = []string{"Acme.test"} })
	bad("groups_claim", func(r *wire.SSORequest) { r.GroupsClaim = "groups claim" })
	bad("group_roles[0].role", func(r *wire.SSORequest) { r.GroupRoles[0].Role = "" })
	bad("default_role", func(r *wire.SSORequest) { r.DefaultRole = "no-such-role" })
	bad("default_role", func(r *wire.SSORequest) { r.DefaultRole, r.GroupRoles = "", nil })
	r = b.do(t, http.MethodPut, "/api/v1/sso", owner, []byte(`{"issuer_url":`))
	require.Equal(t, http.StatusBadRequest, r.status)
	var now wire.SSOConfig
	b.do(t, http.MethodGet, "/api/v1/sso", owner, nil).decode(t, &now)
	require.Equal(t, "developer", now.DefaultRole, "no refused change took")
	require.Equal(t, []wire.SSOGroupRole{{Group: "platform", Role: "admin"}}, now.GroupRoles)

	// A sign-in, then: the secret is in no log line and no audit record.
	requireSignedIn(t, newBrowser(t, op).signIn(t, b.base, "tenant=acme", "alice@acme.test"))
	require.NotContains(t, logs.String(), ssoSecret)
	recs, err := json.Marshal(b.control.AuditOf(tenantA))
	require.NoError(t, err)
	require.Contains(t, string(recs), `"route":"PUT /api/v1/sso"`, "the changes are audited")
	require.NotContains(t, string(recs), ssoSecret)

	// Deleted: GET is 404, and sign-in finds no tenant.
	r = b.do(t, http.MethodDelete, "/api/v1/sso", owner, nil)
	require.Equal(t, http.StatusNoContent, r.status, "%s", r.body)
	b.do(t, http.MethodGet, "/api/v1/sso", owner, nil).requireError(t, http.StatusNotFound, apierr.NotFound)
	b.do(t, http.MethodDelete, "/api/v1/sso", owner, nil).requireError(t, http.StatusNotFound, apierr.NotFound)
	at, _ := newBrowser(t, op).get(t, b.base+"/console/api/sso/start?tenant=acme")
	requireRefused(t, at, apierr.NotFound, "no tenant signs in with SSO")
}

// Each tenant signs in with its own configuration only: a tenant's
// name starts its own provider client, a person lands in that tenant
// with that tenant's role, a domain two tenants list finds neither, and
// a code one tenant's client was given is refused at another's
// callback.
func TestSSOTenantsNeverShareConfigurations(t *testing.T) {
	t.Parallel()
	b, op, _ := ssoSetup(t, "jobbie-tenant-a", acmeSSO())
	b.control.NameTenant(tenantB, "bcorp")
	op.client("jobbie-tenant-b", "b-secret", b.base)
	ownerB := b.signer.Sign(claimsFor(tenantB, "key_owner_b", tenancy.RoleOwner, "default"))
	bcfg := wire.SSORequest{IssuerURL: op.issuer, ClientID: "jobbie-tenant-b", ClientSecret: "b-secret",
		AllowedGroups: []string{"jobbie-users"}, DefaultRole: "developer"}
	r := b.do(t, http.MethodPut, "/api/v1/sso", ownerB, bcfg)
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)

	// Each owner reads its own tenant's configuration.
	var got wire.SSOConfig
	b.do(t, http.MethodGet, "/api/v1/sso", ownerB, nil).decode(t, &got)
	require.Equal(t, "jobbie-tenant-b", got.ClientID)
	b.do(t, http.MethodGet, "/api/v1/sso", b.key(t, tenancy.RoleOwner, "default"), nil).decode(t, &got)
	require.Equal(t, "jobbie-tenant-a", got.ClientID)

	// bcorp's sign-in goes to bcorp's client, and lands in tenant B.
	br := newBrowser(t, op)
	auth := br.until(t, b.base+"/console/api/sso/start?tenant=bcorp", nil, "/auth")
	require.Equal(t, "jobbie-tenant-b", auth.Query().Get("client_id"))
	br = newBrowser(t, op)
	requireSignedIn(t, br.signIn(t, b.base, "tenant=bcorp", "dave@partner.test"))
	_, s := br.session(t, b.base)
	require.Equal(t, tenantB, s.TenantID)
	require.Equal(t, "developer", s.Role, "B's default role, not A's viewer")
	status, body := br.do(t, http.MethodGet, b.base+"/api/v1/sso", nil)
	require.Equal(t, http.StatusForbidden, status, "a developer of B may not read it either: %s", body)

	// Once two tenants list acme.test, an acme.test email finds neither.
	bcfg.AllowedDomains, bcfg.ClientSecret = []string{"acme.test"}, ""
	require.Equal(t, http.StatusOK, b.do(t, http.MethodPut, "/api/v1/sso", ownerB, bcfg).status)
	at, _ := newBrowser(t, op).get(t, b.base+"/console/api/sso/start?email=bob@acme.test")
	requireRefused(t, at, apierr.NotFound, "no tenant signs in with SSO")

	// A code the provider gave tenant A's client, brought to a sign-in
	// of tenant B (its state and cookie), is exchanged with B's client,
	// and refused.
	codeA := newBrowser(t, op).toCallback(t, b.base, "tenant=acme", "alice@acme.test", nil).Query().Get("code")
	thief := newBrowser(t, op)
	cbB := thief.toCallback(t, b.base, "tenant=bcorp", "dave@partner.test", nil)
	v := cbB.Query()
	v.Set("code", codeA)
	cbB.RawQuery = v.Encode()
	at, _ = thief.get(t, cbB.String())
	requireRefused(t, at, apierr.Unauthenticated, "the identity provider refused exchanging the authorization code")
	status, _ = thief.session(t, b.base)
	require.Equal(t, http.StatusUnauthorized, status)
	require.False(t, strings.Contains(at.RawQuery, "b-secret"))
}

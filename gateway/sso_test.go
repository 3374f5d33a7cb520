package gateway

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/gateway/console"
	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// Console sign-in through a tenant's identity provider, end to end: a
// real OpenID Connect provider (sso_op_test.go), a real gateway, and a
// browser that follows every redirect and posts the provider's login
// form. Nothing of the flow is faked.

const ssoSecret = "client-secret-that-must-never-show"

// ssoSetup starts a provider and a gateway allowed to reach it, names
// tenant A "acme", registers clientID at the provider and sets tenant
// A's configuration (cfg, completed with the provider and client).
func ssoSetup(t *testing.T, clientID string, cfg wire.SSORequest, opts ...func(*Config)) (*bundle, *testOP, *syncBuffer) {
	t.Helper()
	op := startOP(t)
	logs := &syncBuffer{}
	b := setup(t, append([]func(*Config){func(c *Config) {
		c.SSOAllowPrivate, c.SSORootCAs = true, op.roots // the provider is on loopback
		c.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}}, opts...)...)
	b.control.NameTenant(tenantA, "acme")
	op.client(clientID, ssoSecret, b.base)
	cfg.IssuerURL, cfg.ClientID, cfg.ClientSecret = op.issuer, clientID, ssoSecret
	r := b.do(t, http.MethodPut, "/api/v1/sso", b.key(t, tenancy.RoleOwner, "default"), cfg)
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	return b, op, logs
}

// acmeSSO admits acme.test's people and the jobbie-users group, makes
// platform's members admins, and everyone else a viewer.
func acmeSSO() wire.SSORequest {
	return wire.SSORequest{AllowedDomains: []string{"acme.test"}, AllowedGroups: []string{"jobbie-users"},
		GroupRoles: []wire.SSOGroupRole{{Group: "platform", Role: "admin"}}, DefaultRole: "viewer"}
}

// session is the browser's console session.
func (br *browser) session(t *testing.T, base string) (int, console.SessionAnswer) {
	t.Helper()
	status, body := br.do(t, http.MethodGet, base+"/console/api/session", nil)
	var s console.SessionAnswer
	if status == http.StatusOK {
		require.NoError(t, json.Unmarshal([]byte(body), &s))
	}
	return status, s
}

func requireSignedIn(t *testing.T, at *url.URL) {
	t.Helper()
	require.Equal(t, "/console/", at.Path, "the console, not %s", at)
	require.Empty(t, at.Query().Get("sso_error"))
}

func requireRefused(t *testing.T, at *url.URL, code apierr.Code, says string) {
	t.Helper()
	require.Equal(t, "/console/", at.Path, "the sign-in screen, not %s", at)
	require.Equal(t, string(code), at.Query().Get("sso_code"), "%s", at.Query().Get("sso_error"))
	require.Contains(t, at.Query().Get("sso_error"), says)
}

// A person of the tenant's domain or allowed group signs in through the
// provider and gets the role their groups map to; their requests are
// authorized with it, and the audit log names them. Someone neither at
// an allowed domain nor in an allowed group is refused and gets no
// session.
func TestSSOSignInMapsGroupsToRoles(t *testing.T) {
	t.Parallel()
	b, op, _ := ssoSetup(t, "jobbie-roles", acmeSSO())

	alice := newBrowser(t, op)
	requireSignedIn(t, alice.signIn(t, b.base, "tenant=acme", "alice@acme.test"))
	status, s := alice.session(t, b.base)
	require.Equal(t, http.StatusOK, status)
	require.Equal(t, tenantA, s.TenantID)
	require.Equal(t, "admin", s.Role, "platform maps to admin")
	require.Equal(t, "sso:alice@acme.test", s.KeyID)
	require.NotNil(t, s.Person)
	require.Equal(t, "alice@acme.test", s.Person.Email)
	require.Equal(t, "Alice Admin", s.Person.Name, "read from the provider's userinfo")
	require.Equal(t, "u-alice", s.Person.Subject)
	require.Equal(t, op.issuer, s.Person.Issuer)
	require.Contains(t, s.Actions, "key.manage")
	require.NotContains(t, s.Actions, "sso.manage", "the owner's alone")

	// An admin may create a key; the audit log names the person.
	status, body := alice.do(t, http.MethodPost, b.base+"/api/v1/keys", strings.NewReader(`{"name":"made-by-alice","role":"viewer"}`))
	require.Equal(t, http.StatusCreated, status, body)
	status, _ = alice.do(t, http.MethodGet, b.base+"/api/v1/sso", nil)
	require.Equal(t, http.StatusForbidden, status, "an admin person may not read the SSO configuration")
	require.Eventually(t, func() bool {
		for _, rec := range b.control.AuditOf(tenantA) {
			if rec.KeyID == "sso:alice@acme.test" && rec.Route == "POST /api/v1/keys" && rec.Result == "ok" {
				return true
			}
		}
		return false
	}, 10*time.Second, 10*time.Millisecond, "the key's creation is recorded under the person")
	b.shard.setHandler(func(w http.ResponseWriter, _ *http.Request) { writeJSON(w, http.StatusOK, wire.AuditPage{}) }) // the namespace's own log: empty
	var page wire.AuditPage
	r := b.do(t, http.MethodGet, "/api/v1/audit?key_id=sso:alice@acme.test", b.key(t, tenancy.RoleOwner, "default", tenancy.AllNamespaces), nil)
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	r.decode(t, &page)
	require.NotEmpty(t, page.Records)
	for _, rec := range page.Records {
		require.Equal(t, "alice@acme.test", rec.KeyName)
		require.Equal(t, "admin", rec.Role)
	}

	// Bob is at acme.test in no mapped group: the default role, a viewer.
	bob := newBrowser(t, op)
	requireSignedIn(t, bob.signIn(t, b.base, "email=bob@acme.test", "bob@acme.test"))
	_, s = bob.session(t, b.base)
	require.Equal(t, "viewer", s.Role)
	status, body = bob.do(t, http.MethodPost, b.base+"/api/v1/keys", strings.NewReader(`{"name":"made-by-bob","role":"viewer"}`))
	require.Equal(t, http.StatusForbidden, status, body)
	status, _ = bob.do(t, http.MethodGet, b.base+"/api/v1/keys", nil)
	require.Equal(t, http.StatusForbidden, status, "a viewer may not list keys")
	status, _ = bob.do(t, http.MethodGet, b.base+"/api/v1/namespaces", nil)
	require.Equal(t, http.StatusOK, status, "a viewer may read namespaces")

	// Dave is at another domain, in the allowed group: a viewer too.
	dave := newBrowser(t, op)
	requireSignedIn(t, dave.signIn(t, b.base, "tenant=acme", "dave@partner.test"))
	_, s = dave.session(t, b.base)
	require.Equal(t, "viewer", s.Role)

	// Carol is neither: refused, with no session.
	carol := newBrowser(t, op)
	requireRefused(t, carol.signIn(t, b.base, "tenant=acme", "carol@elsewhere.test"), apierr.Forbidden,
		"carol@elsewhere.test is not allowed to sign in to this tenant")
	status, _ = carol.session(t, b.base)
	require.Equal(t, http.StatusUnauthorized, status)
	for _, rec := range b.control.AuditOf(tenantA) {
		require.NotEqual(t, "sso:carol@elsewhere.test", rec.KeyID)
	}

	// Erin's acme.test email is one the provider does not vouch for: the
	// domain does not admit her.
	requireRefused(t, newBrowser(t, op).signIn(t, b.base, "tenant=acme", "erin@acme.test"), apierr.Forbidden,
		"not allowed to sign in to this tenant")
}

// A person in no mapped group is refused when the tenant gives no
// default role.
func TestSSONoDefaultRoleRefusesTheUnmapped(t *testing.T) {
	t.Parallel()
	cfg := acmeSSO()
	cfg.DefaultRole = ""
	b, op, _ := ssoSetup(t, "jobbie-nodefault", cfg)
	requireRefused(t, newBrowser(t, op).signIn(t, b.base, "tenant=acme", "bob@acme.test"), apierr.Forbidden,
		"in no group the tenant maps to a role")
	requireSignedIn(t, newBrowser(t, op).signIn(t, b.base, "tenant=acme", "alice@acme.test"))
}

// A person's session slides and ends like a key's: each request moves
// its end to the idle timeout from then, within the cap; idle for the
// timeout it ends; signing out ends it.
func TestSSOPersonSessionSlidesAndEnds(t *testing.T) {
	t.Parallel()
	clk := clockwork.NewFakeClockAt(time.Now()) // the provider's tokens are judged by it at sign-in
	b, op, _ := ssoSetup(t, "jobbie-idle", acmeSSO(), func(c *Config) {
		c.Clock, c.SessionIdleTimeout, c.SessionMaxAge = clk, 5*time.Minute, time.Hour
	})
	br := newBrowser(t, op)
	requireSignedIn(t, br.signIn(t, b.base, "tenant=acme", "alice@acme.test"))
	_, s := br.session(t, b.base)
	require.Equal(t, clk.Now().Add(5*time.Minute).Unix(), s.ExpiresAt.Unix())
	require.Equal(t, clk.Now().Add(time.Hour).Unix(), s.EndsBy.Unix())

	for range 2 { // 8 minutes in all, never 5 idle
		tick(t, clk, 4*time.Minute)
		status, body := br.do(t, http.MethodGet, b.base+"/api/v1/namespaces", nil)
		require.Equal(t, http.StatusOK, status, body)
	}
	_, s = br.session(t, b.base)
	require.Equal(t, clk.Now().Add(5*time.Minute).Unix(), s.ExpiresAt.Unix(), "slid")

	tick(t, clk, 5*time.Minute) // idle for the timeout
	status, body := br.do(t, http.MethodGet, b.base+"/api/v1/namespaces", nil)
	require.Equal(t, http.StatusUnauthorized, status)
	require.Contains(t, body, "expired")

	br = newBrowser(t, op)
	requireSignedIn(t, br.signIn(t, b.base, "tenant=acme", "alice@acme.test"))
	status, _ = br.do(t, http.MethodDelete, b.base+"/console/api/session", nil)
	require.Equal(t, http.StatusNoContent, status)
	status, _ = br.session(t, b.base)
	require.Equal(t, http.StatusUnauthorized, status)
}

// A group may map to one of the tenant's custom roles: the person's
// requests are authorized with its permissions.
func TestSSOGroupMapsToACustomRole(t *testing.T) {
	t.Parallel()
	op := startOP(t)
	b := setup(t, func(c *Config) { c.SSOAllowPrivate, c.SSORootCAs = true, op.roots })
	b.control.NameTenant(tenantA, "acme")
	op.client("jobbie-custom", ssoSecret, b.base)
	owner := b.key(t, tenancy.RoleOwner, "default", tenancy.AllNamespaces)
	r := b.do(t, http.MethodPost, "/api/v1/roles", owner, wire.RoleRequest{Name: "readers", Description: "namespaces only",
		Permissions: []wire.Permission{{Actions: []string{"namespace.read"}, Namespaces: []string{"*"}, Queues: []string{"*"}}}})
	require.Equal(t, http.StatusCreated, r.status, "%s", r.body)
	cfg := wire.SSORequest{IssuerURL: op.issuer, ClientID: "jobbie-custom", ClientSecret: ssoSecret,
		AllowedGroups: []string{"platform"}, GroupRoles: []wire.SSOGroupRole{{Group: "platform", Role: "readers"}}}
	r = b.do(t, http.MethodPut, "/api/v1/sso", owner, cfg)
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)

	br := newBrowser(t, op)
	requireSignedIn(t, br.signIn(t, b.base, "tenant=acme", "alice@acme.test"))
	_, s := br.session(t, b.base)
	require.Equal(t, "readers", s.Role)
	require.Equal(t, []string{"namespace.read"}, s.Actions)
	status, body := br.do(t, http.MethodGet, b.base+"/api/v1/namespaces", nil)
	require.Equal(t, http.StatusOK, status, body)
	status, body = br.do(t, http.MethodPost, b.base+"/api/v1/keys", strings.NewReader(`{"name":"x","role":"viewer"}`))
	require.Equal(t, http.StatusForbidden, status, body)
}

// A change of the tenant's SSO configuration, or its removal, ends the
// sessions it let in once the gateway next asks control (every 30 s);
// signing in again works under the new one.
func TestSSOConfigChangeEndsPeoplesSessions(t *testing.T) {
	t.Parallel()
	clk := clockwork.NewFakeClockAt(time.Now()) // the provider's tokens are judged by it at sign-in
	b, op, _ := ssoSetup(t, "jobbie-change", acmeSSO(), func(c *Config) { c.Clock = clk })
	owner := b.key(t, tenancy.RoleOwner, "default")
	br := newBrowser(t, op)
	requireSignedIn(t, br.signIn(t, b.base, "tenant=acme", "alice@acme.test"))
	status, body := br.do(t, http.MethodGet, b.base+"/api/v1/namespaces", nil)
	require.Equal(t, http.StatusOK, status, body)

	tick(t, clk, 31*time.Second)
	status, body = br.do(t, http.MethodGet, b.base+"/api/v1/namespaces", nil)
	require.Equal(t, http.StatusOK, status, "unchanged, the session holds: %s", body)

	changed := acmeSSO()
	changed.IssuerURL, changed.ClientID, changed.GroupRoles = op.issuer, "jobbie-change", nil // platform no longer makes admins
	require.Equal(t, http.StatusOK, b.do(t, http.MethodPut, "/api/v1/sso", owner, changed).status)
	tick(t, clk, 31*time.Second)
	status, body = br.do(t, http.MethodGet, b.base+"/api/v1/namespaces", nil)
	require.Equal(t, http.StatusUnauthorized, status, body)
	require.Contains(t, body, "changed since you signed in")

	br = newBrowser(t, op)
	requireSignedIn(t, br.signIn(t, b.base, "tenant=acme", "alice@acme.test"))
	_, s := br.session(t, b.base)
	require.Equal(t, "viewer", s.Role, "the new configuration's role")

	require.Equal(t, http.StatusNoContent, b.do(t, http.MethodDelete, "/api/v1/sso", owner, nil).status)
	tick(t, clk, 31*time.Second)
	status, body = br.do(t, http.MethodGet, b.base+"/api/v1/namespaces", nil)
	require.Equal(t, http.StatusUnauthorized, status, body)
	require.Contains(t, body, "no longer signs in through its identity provider")
}

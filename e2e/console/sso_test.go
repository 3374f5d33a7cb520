package console

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/security"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
	"github.com/zitadel/oidc/v3/example/server/exampleop"
	"github.com/zitadel/oidc/v3/example/server/storage"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"golang.org/x/text/language"

	"github.com/jobbie/jobbie/wire"
)

// Signing in to the console through the tenant's identity provider, in
// Chromium: a real OpenID Connect provider (zitadel's example OP, over
// TLS with the receiver's certificate, which `jobbie dev` trusts) whose
// login form the browser fills in. A person of a mapped group lands in
// the console with that group's role and their name in the top bar, and
// sees that role's screens; one of the allowed domain in no mapped group
// gets the default role's, and not the others; one neither at an allowed
// domain nor in an allowed group is sent back to the sign-in screen with
// the reason.

type ssoUsers map[string]*storage.User

func (u ssoUsers) GetUserByID(id string) *storage.User { return u[id] }
func (u ssoUsers) GetUserByUsername(name string) *storage.User {
	for _, x := range u {
		if x.Username == name {
			return x
		}
	}
	return nil
}
func (ssoUsers) ExampleClientID() string { return "unused-service" }

// ssoGroups adds a groups claim to the provider's userinfo answer.
type ssoGroups struct {
	*storage.Storage
	groups map[string][]string
}

func (s ssoGroups) SetUserinfoFromToken(ctx context.Context, ui *oidc.UserInfo, tokenID, subject, origin string) error {
	if err := s.Storage.SetUserinfoFromToken(ctx, ui, tokenID, subject, origin); err != nil {
		return err
	}
	if g, ok := s.groups[ui.Subject]; ok {
		ui.AppendClaims("groups", g)
	}
	return nil
}

// startProvider starts the provider with a client of the gateway.
func startProvider(t *testing.T, clientID, secret string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	issuer := "https://" + ln.Addr().String()
	user := func(id, email, first, last string) *storage.User {
		return &storage.User{ID: id, Username: email, Password: "secret", FirstName: first, LastName: last, Email: email,
			EmailVerified: true, PreferredLanguage: language.English}
	}
	users := ssoUsers{"u-alice": user("u-alice", "alice@acme.test", "Alice", "Admin"), "u-bob": user("u-bob", "bob@acme.test", "Bob", "Viewer"),
		"u-carol": user("u-carol", "carol@elsewhere.test", "Carol", "Outsider")}
	clients := map[string]*storage.Client{clientID: storage.WebClient(clientID, secret, srv.gateway+"/console/api/sso/callback")}
	st := ssoGroups{Storage: storage.NewStorageWithClients(users, clients), groups: map[string][]string{"u-alice": {"platform"}}}
	op := httptest.NewUnstartedServer(exampleop.SetupServer(issuer, st, nil, false)) // no logger: it would become the process's default
	op.Listener.Close()
	op.Listener = ln
	op.TLS = &tls.Config{Certificates: []tls.Certificate{receiverCert}}
	op.StartTLS()
	t.Cleanup(op.Close)
	return issuer
}

// trustingTab opens a tab that accepts the provider's certificate (the
// test's own, which Chromium does not know).
func trustingTab(t *testing.T) *page {
	p := openPage(t)
	err := p.do(chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, security.SetIgnoreCertificateErrors, security.SetIgnoreCertificateErrorsParams{Ignore: true})
		return err
	}))
	require.NoError(t, err)
	return p
}

// ssoSignIn starts Sign in with SSO for tenant and fills the provider's
// login form as email.
func (p *page) ssoSignIn(tenant, email string) {
	p.t.Helper()
	p.goTo("/console/")
	p.waitFor("form#signin-sso")
	p.setValue("input#sso-tenant", tenant)
	p.click("button#signin-sso-submit")
	p.until(waitTimeout, `location.pathname.startsWith("/login/username") && `+query("#username"), "the provider's login form")
	p.setValue("#username", email)
	p.setValue("#password", "secret")
	p.click(`button[type="submit"]`)
}

func TestConsoleSSOSignIn(t *testing.T) {
	t.Parallel()
	tn := newTenant(t)
	const secret = "e2e-sso-secret"
	issuer := startProvider(t, "jobbie-e2e-"+tn.name, secret)
	body, err := json.Marshal(wire.SSORequest{IssuerURL: issuer, ClientID: "jobbie-e2e-" + tn.name, ClientSecret: secret,
		AllowedDomains: []string{"acme.test"}, GroupRoles: []wire.SSOGroupRole{{Group: "platform", Role: "admin"}}, DefaultRole: "viewer"})
	require.NoError(t, err)
	req, err := http.NewRequestWithContext(ctx(t), http.MethodPut, srv.gateway+"/api/v1/sso", bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+tn.ownerKey)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	answer, _ := io.ReadAll(res.Body)
	res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode, "%s", answer)

	p := trustingTab(t)
	p.ssoSignIn(tn.name, "alice@acme.test")
	p.until(waitTimeout, isVisible(mainNav), "signed in through the provider: the main navigation shows")
	p.waitText("#signed-in", "Alice Admin · admin")
	r := p.apiJSON(http.MethodGet, "/console/api/session", nil, nil)
	require.Equal(t, http.StatusOK, r.Status, r.Body)
	require.Contains(t, r.Body, `"email":"alice@acme.test"`)
	require.Contains(t, r.Body, `"key_id":"sso:alice@acme.test"`)
	require.NotContains(t, r.Body, secret)
	require.NotNil(t, p.cookie(sessionCk))
	p.shot("sso-signed-in")
	// platform maps to admin: the admin's screens, the keys' create button.
	p.until(waitTimeout, query(mainNav+` a[href="/console/keys"]`), "an admin's navigation links the API keys")
	p.goTo("/console/keys")
	p.waitAnyScreen("/console/keys")
	p.until(waitTimeout, query("#key-new"), "an admin may create a key")

	// Bob is at acme.test in no mapped group: the default role, viewer,
	// whose navigation has no keys or roles and whose screens change nothing.
	v := trustingTab(t)
	v.ssoSignIn(tn.name, "bob@acme.test")
	v.until(waitTimeout, isVisible(mainNav), "signed in through the provider: the main navigation shows")
	v.waitText("#signed-in", "Bob Viewer · viewer")
	for _, href := range []string{"/console/keys", "/console/roles"} {
		require.Zero(t, v.count(fmt.Sprintf(`%s a[href=%q]`, mainNav, href)), "a viewer's navigation links %s", href)
	}
	v.goTo("/console/keys")
	v.waitAnyScreen("/console/keys")
	require.Zero(t, v.count("#key-new"), "a viewer may not create a key")
	v.goTo("/console/namespaces")
	v.waitAnyScreen("/console/namespaces")
	require.Zero(t, v.count("#namespace-new"), "a viewer may not create a namespace")
	p.goTo("/console/namespaces")
	p.waitAnyScreen("/console/namespaces")
	p.until(waitTimeout, query("#namespace-new"), "the admin may: the viewer's lack is the role's doing")

	// Carol is neither at acme.test nor in platform: back at the sign-in
	// screen with the reason, and no session.
	q := trustingTab(t)
	q.ssoSignIn(tn.name, "carol@elsewhere.test")
	q.waitFor("#signin-sso-error")
	require.Contains(t, q.text("#signin-sso-error"), "carol@elsewhere.test is not allowed to sign in to this tenant")
	require.False(t, strings.Contains(eval[string](q, "location.search"), "sso_error"), "the reason is taken from the address bar")
	require.Nil(t, q.cookie(sessionCk))
	q.shot("sso-refused")
}

package console

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/tenancy"
)

// revocationBound is how long a revoked key may keep working at a gateway:
// the freshness bound of its revocation list (gateway.Config's
// RevocationMaxAge, 60 s by default, which jobbie dev keeps). The list is
// polled every second, so a revocation normally lands within about one.
const revocationBound = 60 * time.Second

// Signed out, every console path asks for a key.
func TestEveryPathAsksToSignIn(t *testing.T) {
	t.Parallel()
	p := openPage(t)
	for _, path := range []string{"/console/", "/console/queues", "/console/queues/emails", "/console/jobs/j1", "/console/keys"} {
		p.goTo(path)
		p.waitFor(signInForm)
		p.waitFor("input#api-key")
		p.waitFor("button#signin-submit")
		assert.False(t, p.visible(mainNav), "%s shows the main navigation signed out", path)
	}
}

// A wrong key is refused and leaves no working session; the owner key
// signs in; a reload keeps the session; signing out ends it, on the
// server too.
func TestSignInReloadSignOut(t *testing.T) {
	t.Parallel()
	tn := newTenant(t)
	p := openPage(t)
	p.goTo("/console/")

	p.submitKey(forged(tn.ownerKey))
	p.waitFor("#signin-error")
	assert.Equal(t, "alert", eval[string](p, `document.querySelector('#signin-error').getAttribute('role')`))
	assert.NotEmpty(t, strings.TrimSpace(p.text("#signin-error")))
	assert.Nil(t, p.cookie(sessionCk), "a refused key got a session cookie")
	assert.Equal(t, 401, p.apiJSON("GET", "/console/api/session", nil, nil).Status)
	assert.Equal(t, 401, p.apiJSON("GET", "/api/v1/queues", nil, nil).Status)
	assert.False(t, p.visible(mainNav))

	p.signIn(tn.ownerKey)
	p.waitScreen("dashboard")
	ck := p.cookie(sessionCk)
	require.NotNil(t, ck, "signed in without a session cookie")
	assert.Equal(t, 200, p.apiJSON("GET", "/api/v1/queues", nil, nil).Status)

	p.reload()
	p.waitScreen("dashboard")
	assert.True(t, p.visible(mainNav), "a reload lost the session")

	p.click("button#signout")
	p.waitFor(signInForm)
	assert.False(t, p.visible(mainNav))
	assert.Nil(t, p.cookie(sessionCk), "signing out left the cookie")
	assert.Equal(t, 401, p.apiJSON("GET", "/api/v1/queues", nil, nil).Status)

	// The old cookie, put back, no longer works: the server ended it.
	p.setCookie(sessionCk, ck.Value)
	r := p.apiJSON("GET", "/api/v1/queues", nil, nil)
	assert.Equal(t, 401, r.Status, r.Body)
	assert.Equal(t, 401, p.apiJSON("GET", "/console/api/session", nil, nil).Status)
	assert.Equal(t, 401, getWithCookie(t, "/api/v1/queues", ck.Value), "the signed-out cookie works from outside the browser")
}

// The session is in an HttpOnly, SameSite=Strict cookie that scripts
// cannot read, and neither the key nor the token is kept in storage.
func TestSessionCookieIsHttpOnlyAndNothingIsStored(t *testing.T) {
	t.Parallel()
	tn := newTenant(t)
	p := signedIn(t, tn.ownerKey, "/console/", "dashboard")

	ck := p.cookie(sessionCk)
	require.NotNil(t, ck)
	assert.True(t, ck.HTTPOnly, "the session cookie is not HttpOnly")
	assert.Equal(t, network.CookieSameSiteStrict, ck.SameSite)
	assert.Equal(t, "/", ck.Path)
	assert.NotContains(t, eval[string](p, "document.cookie"), sessionCk)
	for k, v := range p.storage() {
		assert.NotContains(t, v, tn.ownerKey, "%s holds the API key", k)
		assert.NotContains(t, v, ck.Value, "%s holds the session token", k)
	}
	assert.NotContains(t, eval[string](p, "document.documentElement.outerHTML"), tn.ownerKey, "the page shows the API key")
}

// A session ends with its key: once the gateway learns of the revocation
// the page's calls get 401, and the console's next request takes it back
// to the sign-in form.
func TestRevokedKeyEndsItsSession(t *testing.T) {
	t.Parallel()
	tn := newTenant(t)
	k := tn.key(t, tenancy.RoleViewer)
	p := signedIn(t, k.Token, "/console/", "dashboard")
	require.Equal(t, 200, p.apiJSON("GET", "/api/v1/queues", nil, nil).Status)

	tn.revoke(t, k.ID)
	start := time.Now()
	var r apiReply
	for r = p.apiJSON("GET", "/api/v1/queues", nil, nil); r.Status != 401; r = p.apiJSON("GET", "/api/v1/queues", nil, nil) {
		require.Equal(t, 200, r.Status, r.Body)
		require.Less(t, time.Since(start), revocationBound, "the revoked key's session still works")
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("the revoked key's session ended after %s", time.Since(start).Round(time.Millisecond))
	assert.Equal(t, "unauthenticated", r.code(), r.Body)

	// The console's next request gets a 401 too: going to the queues
	// screen asks for the queues.
	if !p.visible(signInForm) { // unless it noticed on its own already
		clicked := eval[float64](p, "performance.now()")
		p.click(mainNav + ` a[href="/console/queues"]`)
		p.until(waitTimeout, isVisible(signInForm)+" || "+query(`[data-screen="queues"][data-ready="true"]`),
			"the sign-in form or the queues screen shows")
		if !p.visible(signInForm) {
			asked := eval[int](p, fmt.Sprintf(`performance.getEntriesByType('resource')
  .filter(e => e.name.includes('/api/v1/') && e.startTime > %f).length`, clicked))
			require.Zero(t, asked, "the queues screen got its answer to a revoked key's session and stayed")
			t.Log("the queues screen asked nothing (a stub?): a reload makes the console's next request")
			p.reload()
		}
	}
	p.waitFor(signInForm)
	assert.False(t, p.visible(mainNav))
}

// A mutation by cookie without the CSRF header, as a page of another
// site could send it, is refused; with the header it passes the check.
func TestMutationWithoutCSRFHeaderIsRefused(t *testing.T) {
	t.Parallel()
	tn := newTenant(t)
	tn.enqueue(t, "csrf-probe", map[string]int{"n": 1})
	p := signedIn(t, tn.ownerKey, "/console/", "dashboard")

	r := p.apiJSON("POST", "/api/v1/queues/csrf-probe/pause", nil, nil)
	assert.Equal(t, 403, r.Status, r.Body)
	assert.Contains(t, r.Body, "CSRF")
	r = p.apiJSON("DELETE", "/console/api/session", nil, nil)
	assert.Equal(t, 403, r.Status, "sign-out without the header: %s", r.Body)
	assert.Equal(t, 200, p.apiJSON("GET", "/console/api/session", nil, nil).Status, "a refused sign-out ended the session")

	r = p.apiJSON("POST", "/api/v1/queues/csrf-probe/pause", nil, csrf)
	assert.Equal(t, 200, r.Status, "with the header: %s", r.Body)
}

// getWithCookie is the status of GET path with the session cookie and
// nothing else, from outside the browser.
func getWithCookie(t *testing.T, path, session string) int {
	t.Helper()
	req, err := http.NewRequest("GET", srv.gateway+path, nil)
	require.NoError(t, err)
	req.AddCookie(&http.Cookie{Name: sessionCk, Value: session})
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	return resp.StatusCode
}

// forged is key with its last characters changed: the shape of a key,
// which the gateway refuses.
func forged(key string) string {
	tail := "AAAA"
	if strings.HasSuffix(key, tail) {
		tail = "BBBB"
	}
	return key[:len(key)-len(tail)] + tail
}

// Signed in, the main navigation links every screen, and the session
// endpoint describes the key.
func TestMainNavigationLinksEveryScreen(t *testing.T) {
	t.Parallel()
	tn := newTenant(t)
	p := signedIn(t, tn.ownerKey, "/console/", "dashboard")
	for _, path := range []string{"/console/", "/console/queues", "/console/dead", "/console/schedules", "/console/batches",
		"/console/workers", "/console/events", "/console/namespaces", "/console/keys", "/console/roles", "/console/held", "/console/costs"} {
		assert.Equal(t, 1, p.count(mainNav+` a[href="`+path+`"]`), "links to %s", path)
	}
	var s struct {
		TenantID string `json:"tenant_id"`
		Role     string `json:"role"`
	}
	p.apiJSON("GET", "/console/api/session", nil, nil).decode(t, &s)
	assert.Equal(t, tn.id, s.TenantID)
	assert.Equal(t, "owner", s.Role)
}

// On a phone (390x844) a key typed in signs in, and the dashboard fits
// the screen's width.
func TestSignInOnAPhone(t *testing.T) {
	t.Parallel()
	tn := newTenant(t)
	k := tn.key(t, tenancy.RoleDeveloper)
	_, err := tn.client(k.Token).ListQueues(ctx(t))
	require.NoError(t, err)
	p := openPage(t)
	p.setViewport(390, 844)
	p.goTo("/console/")
	p.typeText("input#api-key", k.Token)
	p.click("button#signin-submit")
	p.waitGone(signInForm)
	p.waitScreen("dashboard")
	assert.Equal(t, "/console/", p.path())
	p.shot("phone-dashboard")
	assert.LessOrEqual(t, eval[int](p, "document.documentElement.scrollWidth"), 390, "the dashboard is wider than the phone")
}

package gateway

import (
	"net/http"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/gateway/admission"
	"github.com/jobbie/jobbie/gateway/console"
	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/tenancy"
)

// requireConsoleHeaders asserts the headers every console answer carries.
func requireConsoleHeaders(t *testing.T, r reply, cache string) {
	t.Helper()
	require.Equal(t, console.CSP, r.header.Get("Content-Security-Policy"))
	require.Contains(t, r.header.Get("Content-Security-Policy"), "default-src 'self'")
	require.Contains(t, r.header.Get("Content-Security-Policy"), "frame-ancestors 'none'")
	require.Equal(t, "nosniff", r.header.Get("X-Content-Type-Options"))
	require.Equal(t, "no-referrer", r.header.Get("Referrer-Policy"))
	require.Equal(t, cache, r.header.Get("Cache-Control"))
}

func TestConsoleRedirectsAndServesNotBuiltPage(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *Config) { c.consoleDist = fstest.MapFS{} }) // a build without the front end
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, p := range []string{"/", "/console"} {
		resp, err := noFollow.Get(b.base + p)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusFound, resp.StatusCode, p)
		require.Equal(t, "/console/", resp.Header.Get("Location"), p)
	}

	for _, p := range []string{"/console/", "/console/queues/emails.send"} {
		r := b.do(t, http.MethodGet, p, "", nil)
		require.Equal(t, http.StatusOK, r.status, p)
		require.Equal(t, "text/html; charset=utf-8", r.header.Get("Content-Type"))
		require.Contains(t, string(r.body), "front end is not built")
		require.Contains(t, string(r.body), "make build")
		require.NotContains(t, string(r.body), "<script")
		require.NotContains(t, string(r.body), "style=")
		requireConsoleHeaders(t, r, "no-store")
	}
	r := b.do(t, http.MethodGet, "/console/api/nothing", "", nil)
	r.requireError(t, http.StatusNotFound, apierr.NotFound)
	requireConsoleHeaders(t, r, "no-store")
}

func TestConsoleServesBuiltFrontEnd(t *testing.T) {
	t.Parallel()
	dist := fstest.MapFS{
		"index.html":             {Data: []byte("<!doctype html><title>Jobbie</title>")},
		"assets/index-4f2a9c.js": {Data: []byte("console.log(1)")},
		"favicon.svg":            {Data: []byte("<svg/>")},
		".gitkeep":               {Data: nil},
	}
	b := setup(t, func(c *Config) { c.consoleDist = dist })

	for _, p := range []string{"/console/", "/console/index.html", "/console/jobs/j_1", "/console/.gitkeep"} {
		r := b.do(t, http.MethodGet, p, "", nil)
		require.Equal(t, http.StatusOK, r.status, p)
		require.Equal(t, "<!doctype html><title>Jobbie</title>", string(r.body), p)
		require.Equal(t, "text/html; charset=utf-8", r.header.Get("Content-Type"))
		requireConsoleHeaders(t, r, "no-store")
	}
	r := b.do(t, http.MethodGet, "/console/assets/index-4f2a9c.js", "", nil)
	require.Equal(t, http.StatusOK, r.status)
	require.Equal(t, "console.log(1)", string(r.body))
	require.Equal(t, "text/javascript; charset=utf-8", r.header.Get("Content-Type"))
	requireConsoleHeaders(t, r, console.CacheForever)

	r = b.do(t, http.MethodGet, "/console/favicon.svg", "", nil)
	require.Equal(t, http.StatusOK, r.status)
	require.Equal(t, "image/svg+xml", r.header.Get("Content-Type"))
	requireConsoleHeaders(t, r, "no-cache")

	r = b.do(t, http.MethodGet, "/console/assets/gone-000000.js", "", nil)
	r.requireError(t, http.StatusNotFound, apierr.NotFound)
	requireConsoleHeaders(t, r, "no-store")
}

// signIn posts key to the session endpoint and returns the answer and
// the session cookie it set (nil when none).
func (b *bundle) signIn(t *testing.T, key string, headers ...string) (reply, *http.Cookie) {
	t.Helper()
	r := b.do(t, http.MethodPost, "/console/api/session", "", map[string]string{"api_key": key},
		append([]string{admission.CSRFHeader, "1"}, headers...)...)
	for _, c := range (&http.Response{Header: r.header}).Cookies() {
		if c.Name == admission.SessionCookie {
			return r, c
		}
	}
	return r, nil
}

func cookieHeader(c *http.Cookie) []string { return []string{"Cookie", c.Name + "=" + c.Value} }

func TestConsoleSessionSignInAndUse(t *testing.T) {
	t.Parallel()
	b := setup(t)
	key := b.key(t, tenancy.RoleDeveloper, "default", "emails")

	r, cookie := b.signIn(t, key)
	require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)
	requireConsoleHeaders(t, r, "no-store")
	require.NotNil(t, cookie)
	require.True(t, cookie.HttpOnly)
	require.Equal(t, http.SameSiteStrictMode, cookie.SameSite)
	require.Equal(t, "/", cookie.Path)
	require.False(t, cookie.Secure, "no Secure over plain HTTP")
	var ans console.SessionAnswer
	r.decode(t, &ans)
	devActions := []string{"job.enqueue", "job.work", "job.read", "job.manage", "queue.read", "queue.manage",
		"schedule.read", "schedule.manage", "namespace.read", "backup.read", "webhook.read", "webhook.manage"}
	require.Equal(t, console.SessionAnswer{KeyID: "key_developer", TenantID: tenantA, Role: "developer",
		Namespaces: []string{"default", "emails"}, DefaultNamespace: "default", ExpiresAt: ans.ExpiresAt, EndsBy: ans.EndsBy,
		Namespace: "default", Actions: devActions}, ans)
	require.WithinDuration(t, time.Now().Add(admission.DefaultSessionIdle), ans.ExpiresAt, time.Minute)
	require.WithinDuration(t, time.Now().Add(admission.DefaultSessionMax), ans.EndsBy, time.Minute)
	require.Equal(t, ans.ExpiresAt.Unix(), cookie.Expires.Unix())

	// Over TLS (as a proxy that ends it says), the cookie is Secure.
	_, secure := b.signIn(t, key, "X-Forwarded-Proto", "https")
	require.True(t, secure.Secure)

	r = b.do(t, http.MethodGet, "/console/api/session", "", nil, cookieHeader(cookie)...)
	require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)
	var shown console.SessionAnswer
	r.decode(t, &shown)
	require.Equal(t, ans, shown)

	// Asked about a namespace, the session answers the role's actions
	// there; a namespace the key may not use falls back to its default.
	r = b.do(t, http.MethodGet, "/console/api/session", "", nil, append(cookieHeader(cookie), "X-Jobbie-Namespace", "emails")...)
	r.decode(t, &shown)
	require.Equal(t, "emails", shown.Namespace)
	require.Equal(t, devActions, shown.Actions)
	r = b.do(t, http.MethodGet, "/console/api/session", "", nil, append(cookieHeader(cookie), "X-Jobbie-Namespace", "other")...)
	r.decode(t, &shown)
	require.Equal(t, "default", shown.Namespace)

	// A viewer's session lists only reads.
	_, vc := b.signIn(t, b.key(t, tenancy.RoleViewer, "default"))
	r = b.do(t, http.MethodGet, "/console/api/session", "", nil, cookieHeader(vc)...)
	r.decode(t, &shown)
	require.Equal(t, []string{"job.read", "queue.read", "schedule.read", "namespace.read", "backup.read", "webhook.read"}, shown.Actions)

	// The cookie stands for the key on /api/v1.
	r = b.do(t, http.MethodGet, "/api/v1/queues", "", nil, cookieHeader(cookie)...)
	require.Equal(t, http.StatusCreated, r.status, "body: %s", r.body) // the fake shard's answer
	require.Equal(t, 1, b.shard.count())
	r = b.do(t, http.MethodGet, "/api/v1/queues", "", nil, append(cookieHeader(cookie), "X-Jobbie-Namespace", "emails")...)
	require.Equal(t, http.StatusCreated, r.status, "body: %s", r.body)

	// Mutations need the CSRF header, and an Origin, when sent, must be the gateway's.
	host := strings.TrimPrefix(b.base, "http://")
	e := b.do(t, http.MethodPost, "/api/v1/enqueue", "", enqueueBody, cookieHeader(cookie)...).
		requireError(t, http.StatusForbidden, apierr.Forbidden)
	require.Contains(t, e.Message, "CSRF")
	e = b.do(t, http.MethodPost, "/api/v1/enqueue", "", enqueueBody, append(cookieHeader(cookie), admission.CSRFHeader, "1", "Origin", "https://evil.example")...).
		requireError(t, http.StatusForbidden, apierr.Forbidden)
	require.Contains(t, e.Message, "CSRF")
	require.Contains(t, e.Message, "evil.example")
	before := b.shard.count()
	for _, origin := range []string{"", "http://" + host, "https://" + host} {
		h := append(cookieHeader(cookie), admission.CSRFHeader, "1")
		if origin != "" {
			h = append(h, "Origin", origin)
		}
		r = b.do(t, http.MethodPost, "/api/v1/enqueue", "", enqueueBody, h...)
		require.Equal(t, http.StatusCreated, r.status, "origin %q: %s", origin, r.body)
	}
	require.Equal(t, before+3, b.shard.count(), "only the CSRF-checked mutations reached the shard")

	// The session carries the key's role: a developer may not mint keys of a higher rank.
	b.do(t, http.MethodPost, "/api/v1/keys", "", map[string]any{"name": "x", "role": "owner"},
		append(cookieHeader(cookie), admission.CSRFHeader, "1")...).requireError(t, http.StatusForbidden, apierr.Forbidden)

	// A request with Authorization is judged by it alone.
	b.do(t, http.MethodGet, "/api/v1/queues", "not-a-jwt", nil, cookieHeader(cookie)...).
		requireError(t, http.StatusUnauthorized, apierr.Unauthenticated)
}

func TestConsoleSessionRefusals(t *testing.T) {
	t.Parallel()
	b := setup(t)
	r, cookie := b.signIn(t, "not-a-jwt")
	r.requireError(t, http.StatusUnauthorized, apierr.Unauthenticated)
	require.Nil(t, cookie)
	require.Empty(t, r.header.Values("Set-Cookie"))

	forger := newSigner(t, b.signer.Kid)
	r, cookie = b.signIn(t, forger.Sign(claimsFor(tenantA, "key_x", tenancy.RoleOwner, "*")))
	r.requireError(t, http.StatusUnauthorized, apierr.Unauthenticated)
	require.Nil(t, cookie)

	e := b.do(t, http.MethodPost, "/console/api/session", "", map[string]string{"api_key": b.key(t, tenancy.RoleViewer, "default")}).
		requireError(t, http.StatusForbidden, apierr.Forbidden)
	require.Contains(t, e.Message, "CSRF", "signing in is a mutation too")
	b.do(t, http.MethodPost, "/console/api/session", "", map[string]string{}, admission.CSRFHeader, "1").
		requireError(t, http.StatusBadRequest, apierr.BadRequest)

	b.do(t, http.MethodGet, "/console/api/session", "", nil).requireError(t, http.StatusUnauthorized, apierr.Unauthenticated)
	forged := &http.Cookie{Name: admission.SessionCookie, Value: "eyJhbGciOiJIUzI1NiJ9.e30.x"}
	b.do(t, http.MethodGet, "/console/api/session", "", nil, cookieHeader(forged)...).requireError(t, http.StatusUnauthorized, apierr.Unauthenticated)
	b.do(t, http.MethodGet, "/api/v1/queues", "", nil, cookieHeader(forged)...).requireError(t, http.StatusUnauthorized, apierr.Unauthenticated)
	require.Zero(t, b.shard.count())
}

func TestConsoleSessionSignOut(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, cookie := b.signIn(t, b.key(t, tenancy.RoleViewer, "default"))
	require.NotNil(t, cookie)

	r := b.do(t, http.MethodDelete, "/console/api/session", "", nil, append(cookieHeader(cookie), admission.CSRFHeader, "1")...)
	require.Equal(t, http.StatusNoContent, r.status, "body: %s", r.body)
	var cleared *http.Cookie
	for _, c := range (&http.Response{Header: r.header}).Cookies() {
		if c.Name == admission.SessionCookie {
			cleared = c
		}
	}
	require.NotNil(t, cleared)
	require.Empty(t, cleared.Value)
	require.True(t, cleared.Expires.Before(time.Now()))

	// The old cookie, replayed, is refused too.
	e := b.do(t, http.MethodGet, "/console/api/session", "", nil, cookieHeader(cookie)...).
		requireError(t, http.StatusUnauthorized, apierr.Unauthenticated)
	require.Contains(t, e.Message, "signed out")
	b.do(t, http.MethodGet, "/api/v1/queues", "", nil, cookieHeader(cookie)...).requireError(t, http.StatusUnauthorized, apierr.Unauthenticated)
	// Signing out without a session is fine.
	require.Equal(t, http.StatusNoContent, b.do(t, http.MethodDelete, "/console/api/session", "", nil, admission.CSRFHeader, "1").status)
}

func TestConsoleSessionEndsWithItsKey(t *testing.T) {
	t.Parallel()
	clk := clockwork.NewFakeClock()
	b := setup(t, func(c *Config) { c.RevocationInterval = time.Second; c.Clock = clk })
	_, cookie := b.signIn(t, b.key(t, tenancy.RoleProducer, "default"))
	require.NotNil(t, cookie)
	csrf := append(cookieHeader(cookie), admission.CSRFHeader, "1")
	require.Equal(t, http.StatusCreated, b.do(t, http.MethodPost, "/api/v1/enqueue", "", enqueueBody, csrf...).status)

	b.control.Revoke("key_producer")
	revokedAt := clk.Now()
	for b.do(t, http.MethodPost, "/api/v1/enqueue", "", enqueueBody, csrf...).status != http.StatusUnauthorized {
		require.Less(t, clk.Since(revokedAt), 5*time.Second, "a revoked key's session still works after 5s")
		tick(t, clk, 100*time.Millisecond)
	}
	e := b.do(t, http.MethodGet, "/console/api/session", "", nil, cookieHeader(cookie)...).
		requireError(t, http.StatusUnauthorized, apierr.Unauthenticated)
	require.Contains(t, e.Message, "revoked")
}

func TestConsoleSessionExpires(t *testing.T) {
	t.Parallel()
	clk := clockwork.NewFakeClock()
	b := setup(t, func(c *Config) { c.Clock = clk })
	_, cookie := b.signIn(t, b.key(t, tenancy.RoleViewer, "default"))
	require.NotNil(t, cookie)
	require.Equal(t, http.StatusOK, b.do(t, http.MethodGet, "/console/api/session", "", nil, cookieHeader(cookie)...).status)

	tick(t, clk, admission.DefaultSessionIdle)
	e := b.do(t, http.MethodGet, "/api/v1/queues", "", nil, cookieHeader(cookie)...).
		requireError(t, http.StatusUnauthorized, apierr.Unauthenticated)
	require.Contains(t, e.Message, "expired")
}

// Reading the session (the console polls it) and signing in count as the
// tenant's requests under its plan's requests_per_second, as any other.
func TestConsoleSessionRequestsAreRateLimited(t *testing.T) {
	t.Parallel()
	b, plans, clk := limitedSetup(t)
	plans.SetPlan(tenantA, limited("starter", 3, 0))
	key := b.key(t, tenancy.RoleDeveloper, "default")
	r, cookie := b.signIn(t, key)
	require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)
	require.NotNil(t, cookie)
	for range 2 {
		r = b.do(t, http.MethodGet, "/console/api/session", "", nil, cookieHeader(cookie)...)
		require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)
	}
	r = b.do(t, http.MethodGet, "/console/api/session", "", nil, cookieHeader(cookie)...)
	r.requireError(t, http.StatusTooManyRequests, apierr.RateLimited)
	r, _ = b.signIn(t, key)
	r.requireError(t, http.StatusTooManyRequests, apierr.RateLimited)
	clk.Advance(time.Second)
	r = b.do(t, http.MethodGet, "/console/api/session", "", nil, cookieHeader(cookie)...)
	require.Equal(t, http.StatusOK, r.status, "a second later: %s", r.body)
}

// sessionCookieOf is the session cookie an answer sets, or nil.
func sessionCookieOf(r reply) *http.Cookie {
	for _, c := range (&http.Response{Header: r.header}).Cookies() {
		if c.Name == admission.SessionCookie {
			return c
		}
	}
	return nil
}

// A session slides: each request moves its end to the idle timeout from
// then (a new cookie), until the absolute cap after sign-in. The defaults
// are 30 minutes idle and 12 hours at most.
func TestConsoleSessionSlidesUntilItsCap(t *testing.T) {
	t.Parallel()
	clk := clockwork.NewFakeClock()
	b := setup(t, func(c *Config) { c.Clock = clk })
	start := clk.Now()
	_, cookie := b.signIn(t, b.key(t, tenancy.RoleViewer, "default"))
	require.NotNil(t, cookie)
	end := start.Add(12 * time.Hour)

	var last reply
	for clk.Since(start) < 12*time.Hour-20*time.Minute {
		tick(t, clk, 20*time.Minute) // under the idle timeout, past the first cookie's end
		last = b.do(t, http.MethodGet, "/api/v1/queues", "", nil, cookieHeader(cookie)...)
		require.Equal(t, http.StatusCreated, last.status, "%s after sign-in: %s", clk.Since(start), last.body)
		next := sessionCookieOf(last)
		require.NotNil(t, next, "%s after sign-in: the request moved the session's end on", clk.Since(start))
		want := clk.Now().Add(30 * time.Minute)
		if want.After(end) {
			want = end
		}
		require.Equal(t, want.Unix(), next.Expires.Unix(), "%s after sign-in", clk.Since(start))
		require.True(t, next.HttpOnly)
		require.Equal(t, http.SameSiteStrictMode, next.SameSite)
		cookie = next
	}
	// The session's answer says when it ends at the latest.
	r := b.do(t, http.MethodGet, "/console/api/session", "", nil, cookieHeader(cookie)...)
	require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)
	var ans console.SessionAnswer
	r.decode(t, &ans)
	require.Equal(t, end.Unix(), ans.EndsBy.Unix())

	// However active, it ends at the cap.
	for clk.Since(start) < 12*time.Hour {
		tick(t, clk, 10*time.Minute)
		r = b.do(t, http.MethodGet, "/api/v1/queues", "", nil, cookieHeader(cookie)...)
		if c := sessionCookieOf(r); c != nil {
			require.False(t, c.Expires.After(end), "a slid cookie outlives the cap: %s", c.Expires)
			cookie = c
		}
	}
	e := r.requireError(t, http.StatusUnauthorized, apierr.Unauthenticated)
	require.Contains(t, e.Message, "expired")
}

// Idle for the timeout, a session ends even though its cap is far; the
// timeout and the cap are the gateway's settings.
func TestConsoleSessionIdleTimeoutAndCapAreSettings(t *testing.T) {
	t.Parallel()
	clk := clockwork.NewFakeClock()
	b := setup(t, func(c *Config) { c.Clock = clk; c.SessionIdleTimeout = 5 * time.Minute; c.SessionMaxAge = time.Hour })
	key := b.key(t, tenancy.RoleViewer, "default")
	r, cookie := b.signIn(t, key)
	var ans console.SessionAnswer
	r.decode(t, &ans)
	require.Equal(t, clk.Now().Add(5*time.Minute).Unix(), ans.ExpiresAt.Unix())
	require.Equal(t, clk.Now().Add(time.Hour).Unix(), ans.EndsBy.Unix())

	// Reading the session keeps it alive too.
	tick(t, clk, 4*time.Minute)
	r = b.do(t, http.MethodGet, "/console/api/session", "", nil, cookieHeader(cookie)...)
	require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)
	slid := sessionCookieOf(r)
	require.NotNil(t, slid)
	r.decode(t, &ans)
	require.Equal(t, clk.Now().Add(5*time.Minute).Unix(), ans.ExpiresAt.Unix())

	tick(t, clk, 5*time.Minute) // idle for the timeout
	e := b.do(t, http.MethodGet, "/api/v1/queues", "", nil, cookieHeader(slid)...).
		requireError(t, http.StatusUnauthorized, apierr.Unauthenticated)
	require.Contains(t, e.Message, "expired")

	// Signing out ends every cookie of the session, the slid one too.
	_, first := b.signIn(t, key)
	tick(t, clk, 2*time.Minute)
	slid = sessionCookieOf(b.do(t, http.MethodGet, "/api/v1/queues", "", nil, cookieHeader(first)...))
	require.NotNil(t, slid)
	require.Equal(t, http.StatusNoContent, b.do(t, http.MethodDelete, "/console/api/session", "", nil, append(cookieHeader(first), admission.CSRFHeader, "1")...).status)
	for _, c := range []*http.Cookie{first, slid} {
		e = b.do(t, http.MethodGet, "/api/v1/queues", "", nil, cookieHeader(c)...).requireError(t, http.StatusUnauthorized, apierr.Unauthenticated)
		require.Contains(t, e.Message, "signed out")
	}
}

package gateway

import (
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/tenancy"
)

// startStatus asks the gateway to start a sign-in (query: tenant= or
// email=) without following the redirect: its status and Retry-After.
func startStatus(t *testing.T, b *bundle, query string) (int, string) {
	t.Helper()
	c := &http.Client{Timeout: 30 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := c.Get(b.base + "/console/api/sso/start?" + query)
	require.NoError(t, err)
	require.NoError(t, res.Body.Close())
	return res.StatusCode, res.Header.Get("Retry-After")
}

// A flood of sign-in starts, unauthenticated, is refused with 429 and
// Retry-After: past the tenant's rate for that tenant, past the
// address's for any; a person then signs in as usual once the rate
// allows.
func TestSSOSignInFloodIsRefused(t *testing.T) {
	t.Parallel()
	clk := clockwork.NewFakeClockAt(time.Now()) // the provider's tokens are judged by it at sign-in
	b, op, _ := ssoSetup(t, "jobbie-flood", acmeSSO(), func(c *Config) {
		c.Clock, c.SSOSignInsPerAddress, c.SSOSignInsPerTenant = clk, 6, 4
	})
	for range 4 {
		status, _ := startStatus(t, b, "tenant=acme")
		require.Equal(t, http.StatusSeeOther, status, "to the provider")
	}
	status, retry := startStatus(t, b, "tenant=acme")
	require.Equal(t, http.StatusTooManyRequests, status, "past the tenant's 4 a minute")
	require.Equal(t, "15", retry, "4 a minute: one every 15s")

	for range 2 { // the refusal took nothing from the address: 2 of its 6 are left
		status, _ = startStatus(t, b, "tenant=nobody")
		require.Equal(t, http.StatusSeeOther, status, "to the sign-in screen: no such tenant")
	}
	status, retry = startStatus(t, b, "tenant=nobody")
	require.Equal(t, http.StatusTooManyRequests, status, "past the address's 6 a minute")
	n, err := strconv.Atoi(retry)
	require.NoError(t, err)
	require.Positive(t, n)

	tick(t, clk, time.Minute)
	br := newBrowser(t, op)
	requireSignedIn(t, br.signIn(t, b.base, "tenant=acme", "alice@acme.test"))
}

// The callback is counted too: a sign-in's start and callback are two
// steps of the address, and a callback past its rate is 429.
func TestSSOCallbackIsRateLimited(t *testing.T) {
	t.Parallel()
	b, op, _ := ssoSetup(t, "jobbie-flood-cb", acmeSSO(), func(c *Config) { c.SSOSignInsPerAddress = 1 })
	br := newBrowser(t, op)
	cb := br.toCallback(t, b.base, "tenant=acme", "alice@acme.test", nil)
	res, err := br.c.Get(cb.String())
	require.NoError(t, err)
	require.NoError(t, res.Body.Close())
	require.Equal(t, http.StatusTooManyRequests, res.StatusCode)
	require.NotEmpty(t, res.Header.Get("Retry-After"))
}

// The tenant's provider is discovered once: a second sign-in asks the
// provider for no discovery document and no keys. A change of the
// configuration to another issuer is discovered at the next sign-in,
// which goes to the new provider.
func TestSSOProviderIsDiscoveredOnce(t *testing.T) {
	t.Parallel()
	b, op, _ := ssoSetup(t, "jobbie-cache", acmeSSO())
	requireSignedIn(t, newBrowser(t, op).signIn(t, b.base, "tenant=acme", "alice@acme.test"))
	require.Equal(t, 1, op.hitsOf("/.well-known/openid-configuration"))
	require.Equal(t, 1, op.hitsOf("/keys"))
	requireSignedIn(t, newBrowser(t, op).signIn(t, b.base, "tenant=acme", "bob@acme.test"))
	require.Equal(t, 1, op.hitsOf("/.well-known/openid-configuration"), "the second sign-in discovers nothing")
	require.Equal(t, 1, op.hitsOf("/keys"), "nor fetches the keys again")
	require.Equal(t, 2, op.hitsOf("/oauth/token"), "both sign-ins reached the provider")

	op2 := startOP(t) // httptest's certificate: the gateway trusts op2's as op's
	op2.client("jobbie-cache", ssoSecret, b.base)
	cfg := acmeSSO()
	cfg.IssuerURL, cfg.ClientID = op2.issuer, "jobbie-cache"
	r := b.do(t, http.MethodPut, "/api/v1/sso", b.key(t, tenancy.RoleOwner, "default"), cfg)
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	br := newBrowser(t, op2)
	requireSignedIn(t, br.signIn(t, b.base, "tenant=acme", "alice@acme.test"))
	require.Equal(t, 1, op2.hitsOf("/.well-known/openid-configuration"))
	require.Equal(t, 1, op2.hitsOf("/oauth/token"))
	require.Equal(t, 1, op.hitsOf("/.well-known/openid-configuration"), "the old provider is not asked")
	_, s := br.session(t, b.base)
	require.Equal(t, "admin", s.Role)
}

package gateway

import (
	"fmt"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/gateway/sso"
	"github.com/jobbie/jobbie/tenancy"
)

// startFrom asks the gateway, from the loopback address from (the whole
// 127/8 is this host's), to start a sign-in (query: tenant= or email=)
// without following the redirect: its status and Retry-After.
func startFrom(t *testing.T, b *bundle, from, query string) (int, string) {
	t.Helper()
	tr := &http.Transport{DialContext: (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}).DialContext}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr, Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := c.Get(b.base + "/console/api/sso/start?" + query)
	require.NoError(t, err)
	require.NoError(t, res.Body.Close())
	return res.StatusCode, res.Header.Get("Retry-After")
}

// A flood of sign-in starts, unauthenticated, is refused with 429 and
// Retry-After: from one address past the address's rate, whatever the
// tenant, while a person elsewhere signs in as usual; for one tenant
// past the tenant's rate, from any address, until the rate allows again.
func TestSSOSignInFloodIsRefused(t *testing.T) {
	t.Parallel()
	clk := clockwork.NewFakeClockAt(time.Now()) // the provider's tokens are judged by it at sign-in
	b, op, _ := ssoSetup(t, "jobbie-flood", acmeSSO(), func(c *Config) {
		c.Clock, c.SSOSignInsPerAddress, c.SSOSignInsPerTenant = clk, 6, 8
	})
	for i := range 6 {
		status, _ := startFrom(t, b, "127.0.0.2", fmt.Sprintf("tenant=nobody-%d", i))
		require.Equal(t, http.StatusSeeOther, status, "to the sign-in screen: no such tenant")
	}
	status, retry := startFrom(t, b, "127.0.0.2", "tenant=acme")
	require.Equal(t, http.StatusTooManyRequests, status, "past the address's 6 a minute")
	require.Equal(t, "10", retry, "6 a minute: one every 10s")
	requireSignedIn(t, newBrowser(t, op).signIn(t, b.base, "tenant=acme", "alice@acme.test")) // from 127.0.0.1

	for i := range 7 { // the sign-in's start took 1 of acme's 8
		status, _ = startFrom(t, b, fmt.Sprintf("127.0.0.%d", 10+i%3), "tenant=acme")
		require.Equal(t, http.StatusSeeOther, status, "to the provider")
	}
	status, retry = startFrom(t, b, "127.0.0.20", "tenant=acme")
	require.Equal(t, http.StatusTooManyRequests, status, "past acme's 8 a minute, from a fresh address")
	require.Equal(t, "8", retry, "8 a minute: one every 7.5s")
	status, _ = startFrom(t, b, "127.0.0.1", "tenant=acme")
	require.Equal(t, http.StatusTooManyRequests, status, "the person too, while the tenant is flooded")

	tick(t, clk, time.Minute)
	requireSignedIn(t, newBrowser(t, op).signIn(t, b.base, "tenant=acme", "bob@acme.test"))
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

// A discovered provider serves for sso.ProviderTTL: a start within it
// asks the provider nothing, the first after it discovers it again.
func TestSSOProviderIsDiscoveredAgainAfterItsTTL(t *testing.T) {
	t.Parallel()
	clk := clockwork.NewFakeClockAt(time.Now())
	b, op, _ := ssoSetup(t, "jobbie-ttl", acmeSSO(), func(c *Config) { c.Clock = clk })
	status, _ := startFrom(t, b, "127.0.0.1", "tenant=acme")
	require.Equal(t, http.StatusSeeOther, status)
	require.Equal(t, 1, op.hitsOf("/.well-known/openid-configuration"))
	tick(t, clk, sso.ProviderTTL-time.Second)
	status, _ = startFrom(t, b, "127.0.0.1", "tenant=acme")
	require.Equal(t, http.StatusSeeOther, status)
	require.Equal(t, 1, op.hitsOf("/.well-known/openid-configuration"), "within its TTL")
	tick(t, clk, time.Second)
	status, _ = startFrom(t, b, "127.0.0.1", "tenant=acme")
	require.Equal(t, http.StatusSeeOther, status)
	require.Equal(t, 2, op.hitsOf("/.well-known/openid-configuration"), "past its TTL: discovered again")
}

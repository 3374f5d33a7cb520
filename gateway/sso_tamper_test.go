package gateway

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/apierr"
)

// The sign-in's bindings hold against a browser or an attacker changing
// what travels through the URL: the state must be this browser's, the ID
// token's nonce this sign-in's, and the code must be exchanged with the
// PKCE verifier of the sign-in that asked for it. Each refusal leaves no
// session, and a sign-in is used once.
func TestSSOStateNonceAndPKCEHold(t *testing.T) {
	t.Parallel()
	b, op, _ := ssoSetup(t, "jobbie-tamper", acmeSSO())

	// The authorization request asks for S256 PKCE, a state and a nonce.
	br := newBrowser(t, op)
	auth := br.until(t, b.base+"/console/api/sso/start?tenant=acme", nil, "/auth")
	q := auth.Query()
	require.Equal(t, "S256", q.Get("code_challenge_method"))
	require.NotEmpty(t, q.Get("code_challenge"))
	require.NotEmpty(t, q.Get("state"))
	require.NotEmpty(t, q.Get("nonce"))
	require.Equal(t, "jobbie-tamper", q.Get("client_id"))
	require.Equal(t, b.base+"/console/api/sso/callback", q.Get("redirect_uri"))

	// A tampered state is refused, and the genuine answer then finds the
	// sign-in used.
	cb := br.toCallback(t, b.base, "tenant=acme", "alice@acme.test", nil)
	genuine := *cb
	bad := cb.Query()
	bad.Set("state", bad.Get("state")+"x")
	cb.RawQuery = bad.Encode()
	at, _ := br.get(t, cb.String())
	requireRefused(t, at, apierr.BadRequest, "state")
	at, _ = br.get(t, genuine.String())
	requireRefused(t, at, apierr.Unauthenticated, "no sign-in in progress")
	status, _ := br.session(t, b.base)
	require.Equal(t, http.StatusUnauthorized, status)

	// An ID token whose nonce is not this sign-in's is refused.
	br = newBrowser(t, op)
	cb = br.toCallback(t, b.base, "tenant=acme", "alice@acme.test", func(a *url.URL) {
		v := a.Query()
		v.Set("nonce", "not-the-gateways-nonce")
		a.RawQuery = v.Encode()
	})
	at, _ = br.get(t, cb.String())
	requireRefused(t, at, apierr.Unauthenticated, "nonce")
	status, _ = br.session(t, b.base)
	require.Equal(t, http.StatusUnauthorized, status)

	// One browser's code brought to another's sign-in (its state, so its
	// cookie's): exchanged with the other sign-in's PKCE verifier, which
	// the provider refuses.
	victim, thief := newBrowser(t, op), newBrowser(t, op)
	stolen := victim.toCallback(t, b.base, "tenant=acme", "alice@acme.test", nil).Query().Get("code")
	own := thief.toCallback(t, b.base, "tenant=acme", "bob@acme.test", nil)
	swapped := own.Query()
	swapped.Set("code", stolen)
	own.RawQuery = swapped.Encode()
	at, _ = thief.get(t, own.String())
	requireRefused(t, at, apierr.Unauthenticated, "the identity provider refused exchanging the authorization code")
	status, _ = thief.session(t, b.base)
	require.Equal(t, http.StatusUnauthorized, status)

	// Untouched, the same steps sign in.
	br = newBrowser(t, op)
	at, _ = br.get(t, br.toCallback(t, b.base, "tenant=acme", "alice@acme.test", nil).String())
	requireSignedIn(t, at)
}

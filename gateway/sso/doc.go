// Package sso is the console's OpenID Connect relying party: it signs a
// person in at their tenant's identity provider (the authorization code
// flow with PKCE S256, state and nonce, by github.com/coreos/go-oidc and
// golang.org/x/oauth2), verifies the ID token, decides from the tenant's
// configuration whether the person may sign in and with which role, and
// answers the Person. A tenant's discovered provider is kept for its
// next sign-ins (providers.go). Every call to the provider goes through
// the egress guard (internal/outbound). What a person's session is and
// does is admission's; the endpoints are the console's.
package sso

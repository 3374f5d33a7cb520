package gateway

import (
	"net/http"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/tenancy"
)

func TestAuthRefusesBadKeys(t *testing.T) {
	t.Parallel()
	b := setup(t)

	expired := claimsFor(tenantA, "key_old", tenancy.RoleProducer, "default")
	expired.ExpiresAt = jwt.NewNumericDate(time.Now().Add(-time.Minute))
	forger := newSigner(t, b.signer.Kid) // right kid, wrong private key
	stranger := newSigner(t, "sig-unknown")
	noKid := jwt.NewWithClaims(jwt.SigningMethodEdDSA, claimsFor(tenantA, "key_x", tenancy.RoleProducer, "default"))
	noKidKey, err := noKid.SignedString(b.signer.Priv)
	require.NoError(t, err)
	hmac := jwt.NewWithClaims(jwt.SigningMethodHS256, claimsFor(tenantA, "key_x", tenancy.RoleProducer, "default"))
	hmac.Header["kid"] = b.signer.Kid
	hmacKey, err := hmac.SignedString([]byte("guess"))
	require.NoError(t, err)
	badIssuer := claimsFor(tenantA, "key_x", tenancy.RoleProducer, "default")
	badIssuer.Issuer = "someone"

	cases := []struct {
		name, header, message string
	}{
		{"missing", "", "missing API key"},
		{"not bearer", "Basic dXNlcjpwYXNz", "malformed Authorization header"},
		{"empty bearer", "Bearer   ", "missing API key"},
		{"malformed", "Bearer not-a-jwt", "malformed"},
		{"bad signature", "Bearer " + forger.Sign(claimsFor(tenantA, "key_x", tenancy.RoleProducer, "default")), "signature is invalid"},
		{"expired", "Bearer " + b.signer.Sign(expired), "expired"},
		{"unknown kid", "Bearer " + stranger.Sign(claimsFor(tenantA, "key_x", tenancy.RoleProducer, "default")), "unknown signing key"},
		{"no kid", "Bearer " + noKidKey, "no signing key"},
		{"hmac", "Bearer " + hmacKey, "signature is invalid"},
		{"bad issuer", "Bearer " + b.signer.Sign(badIssuer), "issuer"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := b.do(t, http.MethodPost, "/api/v1/enqueue", "", enqueueBody, "Authorization", tc.header)
			e := r.requireError(t, http.StatusUnauthorized, apierr.Unauthenticated)
			require.Contains(t, e.Message, tc.message)
		})
	}
	require.Zero(t, b.shard.count(), "a refused request reached the shard")
}

func TestAuthAcceptsAndCachesKey(t *testing.T) {
	t.Parallel()
	b := setup(t)
	key := b.key(t, tenancy.RoleProducer, "default")
	for range 3 {
		r := b.do(t, http.MethodPost, "/api/v1/enqueue", key, enqueueBody)
		require.Equal(t, http.StatusCreated, r.status, "body: %s", r.body)
	}
	require.Equal(t, 1, b.gw.gate.CachedKeys())
}

func TestAuthOperatorKeyRefused(t *testing.T) {
	t.Parallel()
	b := setup(t)
	op := tenancy.KeyClaims{Role: tenancy.RoleOperator, RegisteredClaims: jwt.RegisteredClaims{Issuer: tenancy.Issuer, Subject: "key_op"}}
	r := b.do(t, http.MethodGet, "/api/v1/namespaces", b.signer.Sign(op), nil)
	e := r.requireError(t, http.StatusForbidden, apierr.Forbidden)
	require.Contains(t, e.Message, "operator keys are refused at the gateway (403)")
}

func TestAuthRevokedKeyRefusedWithinFiveSeconds(t *testing.T) {
	t.Parallel()
	clk := clockwork.NewFakeClock()
	b := setup(t, func(c *Config) { c.RevocationInterval = time.Second; c.Clock = clk }) // the production default
	key := b.key(t, tenancy.RoleProducer, "default")
	require.Equal(t, http.StatusCreated, b.do(t, http.MethodPost, "/api/v1/enqueue", key, enqueueBody).status)

	b.control.Revoke("key_producer")
	revokedAt := clk.Now()
	for b.do(t, http.MethodPost, "/api/v1/enqueue", key, enqueueBody).status != http.StatusUnauthorized {
		require.Less(t, clk.Since(revokedAt), 5*time.Second, "a revoked, cached key still works after 5s")
		tick(t, clk, 100*time.Millisecond)
	}
	require.Less(t, clk.Since(revokedAt), 5*time.Second)

	e := b.do(t, http.MethodPost, "/api/v1/enqueue", key, enqueueBody).requireError(t, http.StatusUnauthorized, apierr.Unauthenticated)
	require.Contains(t, e.Message, "revoked")
}

func TestAuthRotatedSigningKeyIsFetched(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *Config) { c.JWKSInterval = time.Hour; c.JWKSMinRefresh = time.Nanosecond })
	rotated := newSigner(t, "sig-2")
	b.control.SetJWKS([]tenancy.JWK{b.signer.JWK(), rotated.JWK()}, false)

	key := rotated.Sign(claimsFor(tenantA, "key_new", tenancy.RoleProducer, "default"))
	r := b.do(t, http.MethodPost, "/api/v1/enqueue", key, enqueueBody)
	require.Equal(t, http.StatusCreated, r.status, "body: %s", r.body)
}

func TestAuthDroppedSigningKeyStopsCachedKeys(t *testing.T) {
	t.Parallel()
	clk := clockwork.NewFakeClock()
	b := setup(t, func(c *Config) { c.JWKSInterval = 20 * time.Millisecond; c.Clock = clk })
	key := b.key(t, tenancy.RoleProducer, "default")
	require.Equal(t, http.StatusCreated, b.do(t, http.MethodPost, "/api/v1/enqueue", key, enqueueBody).status)

	b.control.SetJWKS([]tenancy.JWK{newSigner(t, "sig-2").JWK()}, false)
	tick(t, clk, 20*time.Millisecond) // the next JWKS refresh
	require.Equal(t, http.StatusUnauthorized, b.do(t, http.MethodPost, "/api/v1/enqueue", key, enqueueBody).status)
}

func TestAuthUnknownKidRefreshIsRateLimited(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *Config) { c.JWKSInterval = time.Hour; c.JWKSMinRefresh = time.Hour })
	before := b.control.JWKSCalls.Load()
	stranger := newSigner(t, "sig-unknown")
	for i := range 5 {
		key := stranger.Sign(claimsFor(tenantA, "key_"+string(rune('a'+i)), tenancy.RoleProducer, "default"))
		b.do(t, http.MethodPost, "/api/v1/enqueue", key, enqueueBody).requireError(t, http.StatusUnauthorized, apierr.Unauthenticated)
	}
	require.LessOrEqual(t, b.control.JWKSCalls.Load()-before, int64(1))
}

func TestAuthExpiryHonouredFromCache(t *testing.T) {
	t.Parallel()
	clk := clockwork.NewFakeClock()
	b := setup(t, func(c *Config) { c.Clock = clk })
	c := claimsFor(tenantA, "key_short", tenancy.RoleProducer, "default")
	c.ExpiresAt = jwt.NewNumericDate(clk.Now().Add(2 * time.Second))
	key := b.signer.Sign(c)
	require.Equal(t, http.StatusCreated, b.do(t, http.MethodPost, "/api/v1/enqueue", key, enqueueBody).status)
	start := clk.Now()
	var refused reply
	for {
		refused = b.do(t, http.MethodPost, "/api/v1/enqueue", key, enqueueBody)
		if refused.status == http.StatusUnauthorized {
			break
		}
		require.Less(t, clk.Since(start), 5*time.Second, "an expired, cached key still works")
		tick(t, clk, 100*time.Millisecond)
	}
	e := refused.requireError(t, http.StatusUnauthorized, apierr.Unauthenticated)
	require.Contains(t, e.Message, "expired")
	require.False(t, clk.Now().Before(c.ExpiresAt.Time), "refused only once exp has passed")
}

func TestNotReadyUntilKeysLoaded(t *testing.T) {
	t.Parallel()
	clk := clockwork.NewFakeClock()
	b := newBundle(t)
	b.control.SetJWKS(nil, true)
	b.start(t, func(c *Config) { c.Clock = clk })

	r := b.do(t, http.MethodGet, "/healthz", "", nil)
	require.Equal(t, http.StatusOK, r.status)
	b.do(t, http.MethodGet, "/readyz", "", nil).requireError(t, http.StatusServiceUnavailable, apierr.Unavailable)
	key := b.key(t, tenancy.RoleProducer, "default")
	r = b.do(t, http.MethodPost, "/api/v1/enqueue", key, enqueueBody)
	r.requireError(t, http.StatusServiceUnavailable, apierr.Unavailable)
	require.Equal(t, "1", r.header.Get("Retry-After"))

	b.control.SetJWKS([]tenancy.JWK{b.signer.JWK()}, false)
	tick(t, clk, 500*time.Millisecond) // a failed refresh is retried within 500ms
	b.waitReady(t)
	require.Equal(t, http.StatusOK, b.do(t, http.MethodGet, "/readyz", "", nil).status)
	require.Equal(t, http.StatusCreated, b.do(t, http.MethodPost, "/api/v1/enqueue", key, enqueueBody).status)
}

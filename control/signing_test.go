package control

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"net/http"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/control/state"
	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/tenancy"
)

// parseWithJWKS verifies a token the way a gateway does: with the public
// keys from the JWKS endpoint only.
func parseWithJWKS(t *testing.T, set tenancy.JWKS, token string) (*tenancy.KeyClaims, *jwt.Token) {
	t.Helper()
	claims := &tenancy.KeyClaims{}
	tok, err := jwt.ParseWithClaims(token, claims, func(tok *jwt.Token) (any, error) {
		for _, k := range set.Keys {
			if k.Kid == tok.Header["kid"] {
				x, err := base64.RawURLEncoding.DecodeString(k.X)
				require.NoError(t, err)
				return ed25519.PublicKey(x), nil
			}
		}
		return nil, jwt.ErrTokenUnverifiable
	}, jwt.WithValidMethods([]string{"EdDSA"}), jwt.WithIssuer("jobbie"))
	require.NoError(t, err)
	require.NoError(t, claims.Check())
	return claims, tok
}

func TestJWTRoundTripThroughJWKS(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	res := b.newTenant(t, "acme")
	_, err := b.srv.CreateNamespace(ctx, res.Tenant.ID, "emails")
	require.NoError(t, err)
	_, err = b.srv.CreateNamespace(ctx, res.Tenant.ID, "x")
	require.NoError(t, err)
	ci, err := b.srv.CreateKey(ctx, res.Tenant.ID, KeyRequest{Name: "ci", Role: "producer", Namespaces: []string{"emails", "x"}})
	require.NoError(t, err)

	r := b.do(t, http.MethodGet, "/control/v1/jwks", "", nil)
	require.Equal(t, http.StatusOK, r.status)
	set := decodeAs[tenancy.JWKS](t, r)
	require.Len(t, set.Keys, 1)
	k := set.Keys[0]
	require.Equal(t, tenancy.JWK{Kty: "OKP", Crv: "Ed25519", X: k.X, Kid: k.Kid, Alg: "EdDSA", Use: "sig"}, k)
	require.Regexp(t, `^sk_[0-9a-z]{26}$`, k.Kid)

	owner, tok := parseWithJWKS(t, set, res.OwnerKey)
	require.Equal(t, k.Kid, tok.Header["kid"])
	require.Equal(t, "jobbie", owner.Issuer)
	require.Regexp(t, `^key_[0-9a-z]{26}$`, owner.Subject)
	require.Equal(t, res.Tenant.ID, owner.TenantID)
	require.Equal(t, tenancy.RoleOwner, owner.Role)
	require.Equal(t, []string{"*"}, owner.Namespaces)
	require.Equal(t, "default", owner.DefaultNamespace)
	require.WithinDuration(t, res.Tenant.CreatedAt, owner.IssuedAt.Time, time.Second)

	claims, _ := parseWithJWKS(t, set, ci.Key)
	require.Equal(t, ci.ID, claims.Subject)
	require.Equal(t, tenancy.RoleProducer, claims.Role)
	require.Equal(t, []string{"emails", "x"}, claims.Namespaces)
	require.Equal(t, "emails", claims.DefaultNamespace)

	op, _ := parseWithJWKS(t, set, b.op)
	require.Equal(t, tenancy.RoleOperator, op.Role)
	require.Empty(t, op.TenantID)
	require.Empty(t, op.Namespaces)
}

func TestVerifyKey(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	res := b.newTenant(t, "acme")

	claims, err := b.srv.VerifyKey(ctx, res.OwnerKey)
	require.NoError(t, err)
	require.Equal(t, res.Tenant.ID, claims.TenantID)

	// A well-formed token signed by a key that is not ours.
	_, foreign, err := ed25519.GenerateKey(nil)
	require.NoError(t, err)
	forged := jwt.NewWithClaims(jwt.SigningMethodEdDSA, claims)
	forged.Header["kid"] = "sk_unknown"
	tok, err := forged.SignedString(foreign)
	require.NoError(t, err)
	for _, bad := range []string{"", "garbage", tok, res.OwnerKey[:len(res.OwnerKey)-4] + "AAAA"} {
		_, err := b.srv.VerifyKey(ctx, bad)
		require.Equal(t, apierr.Unauthenticated, apierr.CodeOf(err), "%q: %v", bad, err)
	}

	require.NoError(t, b.srv.RevokeKey(ctx, res.Tenant.ID, claims.Subject))
	_, err = b.srv.VerifyKey(ctx, res.OwnerKey)
	require.Equal(t, apierr.Unauthenticated, apierr.CodeOf(err))
}

func TestVerifyKeyRefusesExpiredKeys(t *testing.T) {
	t.Parallel()
	b := setup(t)
	res := b.newTenant(t, "acme")
	key := func(exp time.Time) string {
		tok, err := b.srv.Sign(state.APIKey{ID: newID("key_"), TenantID: res.Tenant.ID, Role: tenancy.RoleViewer,
			Namespaces: []string{"*"}, CreatedAt: time.Now().Add(-time.Hour), ExpiresAt: &exp})
		require.NoError(t, err)
		return tok
	}
	_, err := b.srv.VerifyKey(context.Background(), key(time.Now().Add(time.Minute)))
	require.NoError(t, err)
	_, err = b.srv.VerifyKey(context.Background(), key(time.Now().Add(-time.Second)))
	require.Equal(t, apierr.Unauthenticated, apierr.CodeOf(err))
	require.ErrorContains(t, err, "expired")
}

package admission

import (
	"encoding/base64"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/gateway/internal/controlfake"

	"github.com/jobbie/jobbie/tenancy"
)

func TestParseJWKS(t *testing.T) {
	t.Parallel()
	good := controlfake.NewSigner("k1").JWK()
	keys, err := parseJWKS(tenancy.JWKS{Keys: []tenancy.JWK{
		good,
		{Kty: "OKP", Crv: "Ed25519", Kid: "broken", X: "!!"},
		{Kty: "RSA", Kid: "rsa"},
		{Kty: "OKP", Crv: "X25519", Kid: "x", X: good.X},
		{Kty: "OKP", Crv: "Ed25519", Kid: "enc", X: good.X, Use: "enc"},
	}})
	require.NoError(t, err)
	require.Len(t, keys, 1)
	require.Contains(t, keys, "k1")

	_, err = parseJWKS(tenancy.JWKS{})
	require.Error(t, err, "a set without usable keys is refused")
	bad := good
	bad.X = base64.RawURLEncoding.EncodeToString([]byte("short"))
	_, err = parseJWKS(tenancy.JWKS{Keys: []tenancy.JWK{bad}})
	require.Error(t, err)
}

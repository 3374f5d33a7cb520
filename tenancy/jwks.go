package tenancy

import (
	"crypto/ed25519"
	"encoding/base64"
	"fmt"
	"strings"
)

// JWK is an Ed25519 public key in JWK form (RFC 8037): how the control
// plane publishes the keys that sign API keys, and how gateways read them.
type JWK struct {
	Kty string `json:"kty"`
	Crv string `json:"crv"`
	X   string `json:"x"`
	Kid string `json:"kid"`
	Alg string `json:"alg"`
	Use string `json:"use"`
}

// JWKS is a set of signing keys.
type JWKS struct {
	Keys []JWK `json:"keys"`
}

// NewJWK describes an Ed25519 signing key.
func NewJWK(kid string, pub ed25519.PublicKey) JWK {
	return JWK{Kty: "OKP", Crv: "Ed25519", X: base64.RawURLEncoding.EncodeToString(pub), Kid: kid, Alg: "EdDSA", Use: "sig"}
}

// IsEdDSASigning reports whether k is an Ed25519 signing key (other kinds
// in a set are skipped, not errors).
func (k JWK) IsEdDSASigning() bool {
	return k.Kty == "OKP" && k.Crv == "Ed25519" && k.Kid != "" &&
		(k.Alg == "" || k.Alg == "EdDSA") && (k.Use == "" || k.Use == "sig")
}

// PublicKey decodes the key's public half.
func (k JWK) PublicKey() (ed25519.PublicKey, error) {
	x, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(k.X, "="))
	if err != nil || len(x) != ed25519.PublicKeySize {
		return nil, fmt.Errorf("key %q: x is not a base64url Ed25519 public key", k.Kid)
	}
	return ed25519.PublicKey(x), nil
}

package whsign

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Scheme is how a key signs, named by its signature's prefix.
type Scheme string

const (
	// Ed25519 signs "v1a,<base64 signature>".
	Ed25519 Scheme = "v1a"
	// HMAC signs "v1,<base64 HMAC-SHA256>".
	HMAC Scheme = "v1"
)

// The spec's serialization prefixes.
const (
	SecretPrefix     = "whsec_" // an HMAC secret
	PrivateKeyPrefix = "whsk_"  // an Ed25519 private key (its 32-byte seed)
	PublicKeyPrefix  = "whpk_"  // an Ed25519 public key
)

// HMAC secrets are 24 to 64 random bytes (the spec: at least 192 bits);
// generated ones are 32.
const (
	minSecretBytes = 24
	maxSecretBytes = 64
	newSecretBytes = 32
)

// Key is one signing key of a namespace.
type Key struct {
	// ID names the key in the key list (not on the wire: signatures do
	// not name their key).
	ID string
	// NotAfter, when set, is the end of the key's rotation overlap: it
	// signs requests timestamped before it only.
	NotAfter time.Time

	scheme Scheme
	secret []byte             // HMAC
	priv   ed25519.PrivateKey // Ed25519
}

// NewEd25519Key generates an Ed25519 key.
func NewEd25519Key(id string) (Key, error) {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return Key{}, fmt.Errorf("whsign: generate key: %w", err)
	}
	return Key{ID: id, scheme: Ed25519, priv: priv}, nil
}

// NewHMACKey generates a shared secret of 32 random bytes.
func NewHMACKey(id string) (Key, error) {
	s := make([]byte, newSecretBytes)
	if _, err := rand.Read(s); err != nil {
		return Key{}, fmt.Errorf("whsign: generate secret: %w", err)
	}
	return Key{ID: id, scheme: HMAC, secret: s}, nil
}

// ParseKey reads a key from its secret serialization: "whsec_<base64>"
// (an HMAC secret) or "whsk_<base64 of the 32-byte Ed25519 seed>".
func ParseKey(id, secret string) (Key, error) {
	switch {
	case strings.HasPrefix(secret, SecretPrefix):
		b, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, SecretPrefix))
		if err != nil {
			return Key{}, fmt.Errorf("whsign: secret is not base64: %w", err)
		}
		if len(b) < minSecretBytes || len(b) > maxSecretBytes {
			return Key{}, fmt.Errorf("whsign: secret is %d bytes, want %d to %d", len(b), minSecretBytes, maxSecretBytes)
		}
		return Key{ID: id, scheme: HMAC, secret: b}, nil
	case strings.HasPrefix(secret, PrivateKeyPrefix):
		b, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, PrivateKeyPrefix))
		if err != nil {
			return Key{}, fmt.Errorf("whsign: private key is not base64: %w", err)
		}
		if len(b) != ed25519.SeedSize {
			return Key{}, fmt.Errorf("whsign: private key is %d bytes, want %d", len(b), ed25519.SeedSize)
		}
		return Key{ID: id, scheme: Ed25519, priv: ed25519.NewKeyFromSeed(b)}, nil
	}
	return Key{}, errors.New("whsign: a key starts with " + SecretPrefix + " or " + PrivateKeyPrefix)
}

// Scheme is how the key signs.
func (k Key) Scheme() Scheme { return k.scheme }

// Secret is the key's secret serialization, for storing it (and, for an
// HMAC key, for showing it once to the tenant): ParseKey reads it back.
func (k Key) Secret() string {
	if k.scheme == HMAC {
		return SecretPrefix + base64.StdEncoding.EncodeToString(k.secret)
	}
	return PrivateKeyPrefix + base64.StdEncoding.EncodeToString(k.priv.Seed())
}

// PublicKey is what a namespace publishes about a key so that handlers
// can verify: never a secret.
type PublicKey struct {
	ID     string
	Scheme Scheme
	// Key is "whpk_<base64>" for an Ed25519 key, empty for an HMAC key
	// (its secret is the tenant's already).
	Key      string
	NotAfter time.Time
}

// Public is the key's public part.
func (k Key) Public() PublicKey {
	p := PublicKey{ID: k.ID, Scheme: k.scheme, NotAfter: k.NotAfter}
	if k.scheme == Ed25519 {
		p.Key = PublicKeyPrefix + base64.StdEncoding.EncodeToString(k.priv.Public().(ed25519.PublicKey))
	}
	return p
}

// signsAt reports whether the key signs a request timestamped ts.
func (k Key) signsAt(ts time.Time) bool { return k.NotAfter.IsZero() || ts.Before(k.NotAfter) }

package client

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/jobbie/jobbie/wire"
)

// Encryption at rest of the client's namespace (the key's default, or
// WithNamespace's): whether its jobs' payloads, results, checkpoints and
// error texts are sealed on its shard, and the tenant's own key
// (docs/api/encryption.md). The route works on the request's namespace,
// as the queue routes do.

const encryptionPath = "/api/v1/encryption"

// Encryption is a namespace's encryption settings as the API answers
// them: never a key, only TenantKeyID, a digest naming the key in use.
type Encryption = wire.Encryption

// EncryptionRevokedKey is a tenant key revoked, and the generation of
// data it made unreadable.
type EncryptionRevokedKey = wire.EncryptionRevokedKey

// Key sources of Encryption.KeySource.
const (
	KeySourceNone     = wire.KeySourceNone
	KeySourceOperator = wire.KeySourceOperator
	KeySourceTenant   = wire.KeySourceTenant
	KeySourceRevoked  = wire.KeySourceRevoked
)

// Error codes of encryption at rest (409s).
const (
	// CodeEncryptionKeyRevoked: what was asked for was sealed under a
	// tenant key since revoked, or the namespace must be given a new key
	// before it can seal again.
	CodeEncryptionKeyRevoked = string(wire.CodeEncryptionKeyRevoked)
	// CodeEncryptionUnavailable: the namespace's shard has no master key,
	// or one that does not open the namespace's keys.
	CodeEncryptionUnavailable = string(wire.CodeEncryptionOff)
)

// IsEncryptionKeyRevoked reports whether err is the 409 of a value sealed
// under a revoked tenant key (or of a write to a namespace whose key was
// revoked and not replaced).
func IsEncryptionKeyRevoked(err error) bool { return ErrorCode(err) == CodeEncryptionKeyRevoked }

// EncryptionSpec is a change to a namespace's encryption: nil and empty
// fields keep what the namespace has.
type EncryptionSpec struct {
	// Enabled seals what new jobs store; false stops sealing (what was
	// sealed stays readable while its keys are kept).
	Enabled *bool
	// SearchDecrypt lets a search with payload_contains, payload_jq or
	// error_contains open values while it scans.
	SearchDecrypt *bool
	// TenantKey is the tenant's own key, 32 random bytes as base64 or
	// hex: the first one wraps the namespace key in place of the
	// operator's master key, a later one rotates it (nothing stored is
	// rewritten). It is sent, never answered back.
	TenantKey string
	// RevokeTenantKey deletes the tenant key and the keys it wraps:
	// everything sealed under them is unreadable from then on. It cannot
	// go with TenantKey.
	RevokeTenantKey bool
}

// GetEncryption returns the encryption settings of the client's
// namespace (namespace.read).
func (c *Client) GetEncryption(ctx context.Context) (*Encryption, error) {
	var out Encryption
	if _, err := c.do(ctx, "GET", encryptionPath, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// SetEncryption changes the encryption of the client's namespace
// (encryption.manage, the owner's alone) and returns the settings as
// kept. A malformed key is a 400 whose Field is "tenant_key"; a revoke
// with no tenant key to revoke, or with a key, one whose Field is
// "revoke_tenant_key"; nothing changes then. A shard without a master
// key answers 409 CodeEncryptionUnavailable.
func (c *Client) SetEncryption(ctx context.Context, spec EncryptionSpec) (*Encryption, error) {
	in := wire.EncryptionRequest{Enabled: spec.Enabled, SearchDecrypt: spec.SearchDecrypt, RevokeTenantKey: spec.RevokeTenantKey}
	if spec.TenantKey != "" {
		in.TenantKey = &spec.TenantKey
	}
	var out Encryption
	if _, err := c.do(ctx, "PUT", encryptionPath, in, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ErrMalformedTenantKey is TenantKeyID's error for what is not a key the
// API takes.
var ErrMalformedTenantKey = errors.New("jobbie: a tenant key is 32 bytes written as base64 or hex")

// TenantKeyID returns the id the API names tenant key key by
// (Encryption.TenantKeyID), so a holder of keys can tell which is in use
// without sending one: the first 8 bytes of SHA-256 over "jobbie key id",
// a zero byte and the key's 32 bytes, in hex. key is written as the API
// takes it: base64 (standard or URL alphabet, padded or not) or hex.
func TenantKeyID(key string) (string, error) {
	raw, err := decodeTenantKey(key)
	if err != nil {
		return "", err
	}
	h := sha256.Sum256(append([]byte("jobbie key id\x00"), raw...))
	return hex.EncodeToString(h[:8]), nil
}

// decodeTenantKey reads key as the API does: 64 characters are hex, any
// other length base64; 32 bytes, not all zero.
func decodeTenantKey(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	var raw []byte
	var err error
	if len(s) == 64 {
		raw, err = hex.DecodeString(s)
	} else {
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
			if raw, err = enc.DecodeString(s); err == nil {
				break
			}
		}
	}
	if err != nil || len(raw) != 32 {
		return nil, ErrMalformedTenantKey
	}
	if bytes.Equal(raw, make([]byte, 32)) {
		return nil, fmt.Errorf("%w: not 32 zero bytes", ErrMalformedTenantKey)
	}
	return raw, nil
}

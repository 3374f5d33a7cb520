package control

import (
	"time"

	"github.com/jobbie/jobbie/tenancy"
)

// Stored records are JSON. Their fields are part of the on-disk format:
// add fields, never rename or repurpose them.

// Tenant is a customer account.
type Tenant struct {
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	CreatedAt time.Time `json:"created_at"`
}

// Namespace is a tenant's namespace and the shard it is placed on.
type Namespace struct {
	Name      string    `json:"name"`
	CreatedAt time.Time `json:"created_at"`
	ShardID   string    `json:"shard_id"`
}

// NamespaceInfo is a namespace with the address of its shard, which is
// configuration, not state, and so is filled in when read.
type NamespaceInfo struct {
	Namespace
	ShardAddr string `json:"shard_addr"`
}

// APIKey is the stored metadata of an API key. The token itself is never
// stored. TenantID is empty for operator keys; it is part of the storage
// key, not of the record.
type APIKey struct {
	ID         string       `json:"id"`
	TenantID   string       `json:"-"`
	Name       string       `json:"name"`
	Role       tenancy.Role `json:"role"`
	Namespaces []string     `json:"namespaces"`
	CreatedAt  time.Time    `json:"created_at"`
	ExpiresAt  *time.Time   `json:"expires_at,omitempty"` // nil: never expires
	RevokedAt  *time.Time   `json:"revoked_at,omitempty"`
}

// active reports whether the key still works at now: not revoked, not
// expired.
func (k APIKey) active(now time.Time) bool {
	return k.RevokedAt == nil && (k.ExpiresAt == nil || now.Before(*k.ExpiresAt))
}

// CreatedKey is a new API key: its metadata and the token, which is shown
// this once.
type CreatedKey struct {
	APIKey
	Key string `json:"key"`
}

// KeyRequest asks for a new tenant API key. ExpiresAt, when set, must be
// in the future and at most maxKeyLifetimeYears ahead; it is kept to the
// whole second (a fraction is dropped), the precision of the token's exp
// claim. Nil means the key never expires.
type KeyRequest struct {
	Name       string     `json:"name"`
	Role       string     `json:"role"`
	Namespaces []string   `json:"namespaces"`
	ExpiresAt  *time.Time `json:"expires_at,omitempty"`
}

// CreateTenantResult is a new tenant with its default namespace and the
// owner key (a token shown this once).
type CreateTenantResult struct {
	Tenant    Tenant `json:"tenant"`
	Namespace string `json:"namespace"`
	OwnerKey  string `json:"owner_key"`
}

// Revocations is every revoked key id and the list's version, which grows
// by one with each revocation.
type Revocations struct {
	Version uint64   `json:"version"`
	Revoked []string `json:"revoked"`
}

// ShardLoad is a shard and how many namespaces are placed on it.
type ShardLoad struct {
	ID         string `json:"id"`
	Addr       string `json:"addr"`
	Namespaces uint64 `json:"namespaces"`
}

// signingKey is an Ed25519 key that signs API keys. It is replicated state
// so every control node signs and verifies with the same keys.
type signingKey struct {
	ID        string    `json:"kid"`
	Seed      []byte    `json:"seed"` // ed25519 private key seed
	CreatedAt time.Time `json:"created_at"`
}

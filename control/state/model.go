package state

import (
	"crypto/ed25519"
	"time"

	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// Stored records are JSON. Their fields are part of the on-disk format:
// add fields, never rename or repurpose them.

// Tenant is a customer account.
type Tenant struct {
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	CreatedAt time.Time `json:"created_at"`
}

// Namespace is a tenant's namespace, its settings and the shard it is
// placed on. Retention is stored in nanoseconds; 0 is none.
type Namespace struct {
	Name               string        `json:"name"`
	CreatedAt          time.Time     `json:"created_at"`
	ShardID            string        `json:"shard_id"`
	Description        string        `json:"description,omitempty"`
	Retention          time.Duration `json:"retention,omitempty"`
	DeletionProtection bool          `json:"deletion_protection,omitempty"`
}

// APIKey is the stored metadata of an API key. The token itself is never
// stored. TenantID is empty for operator keys; it is part of the storage
// key, not of the record. Generation counts the key's rotations (its
// tokens carry it as jti); Grace lists the replaced secrets that still
// work, and until when. LastUsedAt is stored apart (layout.KeyUsed) and
// filled in when the key is read.
type APIKey struct {
	ID          string        `json:"id"`
	TenantID    string        `json:"-"`
	Name        string        `json:"name"`
	Role        tenancy.Role  `json:"role"`
	Namespaces  []string      `json:"namespaces"`
	CreatedAt   time.Time     `json:"created_at"`
	ExpiresAt   *time.Time    `json:"expires_at,omitempty"` // nil: never expires
	RevokedAt   *time.Time    `json:"revoked_at,omitempty"`
	Description string        `json:"description,omitempty"`
	Generation  uint64        `json:"generation,omitempty"`
	Grace       []GraceSecret `json:"grace,omitempty"`
	RotatedAt   *time.Time    `json:"rotated_at,omitempty"`
	LastUsedAt  *time.Time    `json:"-"`
}

// GraceSecret is a replaced secret of a key (its generation) that works
// until Until.
type GraceSecret struct {
	Generation uint64    `json:"generation"`
	Until      time.Time `json:"until"`
}

// Active reports whether the key still works at now: not revoked, not
// expired.
func (k APIKey) Active(now time.Time) bool {
	return k.RevokedAt == nil && (k.ExpiresAt == nil || now.Before(*k.ExpiresAt))
}

// CreatedKey is a new API key: its metadata and the token, which is shown
// this once. HTTP answers it as wire.CreatedKey (views.go).
type CreatedKey struct {
	APIKey
	Key string
}

// CreateTenantResult is a new tenant with its default namespace and the
// owner key (a token shown this once). HTTP answers it as
// wire.CreatedTenant (views.go).
type CreateTenantResult struct {
	Tenant    Tenant
	Namespace string
	OwnerKey  string
}

// Revocations is every revoked key id and the list's version.
type Revocations = wire.Revocations

// ShardMember is one node of a shard cluster, as it registered. Stored in
// RegisteredShard and in register_shard commands: wire.ShardMember's JSON
// is part of the on-disk format.
type ShardMember = wire.ShardMember

// ShardRegistration is what a shard cluster tells control about itself
// when it starts. A zero Capacity means DefaultShardCapacity; placement
// ranks shards by namespaces/capacity and skips full ones. register_shard
// commands carry it, so its JSON is part of the Raft log's format too.
type ShardRegistration = wire.ShardRegistration

// RegisteredShard is the stored record of a registered shard cluster.
type RegisteredShard struct {
	ID               string        `json:"id"`
	Members          []ShardMember `json:"members"`
	Capacity         uint64        `json:"capacity"`
	Version          string        `json:"version,omitempty"`
	RegisteredAt     time.Time     `json:"registered_at"`      // first registration
	LastRegisteredAt time.Time     `json:"last_registered_at"` // latest registration
}

// SigningKey is an Ed25519 key that signs API keys. It is replicated state
// so every control node signs and verifies with the same keys. RetiresAt
// is set when a rotation replaces it: from then on it verifies nothing
// and leaves the JWKS; a later rotation erases its seed.
type SigningKey struct {
	ID        string     `json:"kid"`
	Seed      []byte     `json:"seed,omitempty"` // ed25519 private key seed; erased once retired
	CreatedAt time.Time  `json:"created_at"`
	RetiresAt *time.Time `json:"retires_at,omitempty"`
}

// Retired reports whether k no longer verifies keys at now.
func (k SigningKey) Retired(now time.Time) bool {
	return k.RetiresAt != nil && !now.Before(*k.RetiresAt)
}

// Usable reports whether k verifies keys at now: not retired, and with
// its seed (erased only once retired).
func (k SigningKey) Usable(now time.Time) bool {
	return !k.Retired(now) && len(k.Seed) == ed25519.SeedSize
}

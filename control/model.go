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

// NamespaceInfo is a namespace with where to reach its shard, which is
// configuration or registration, not part of the namespace, and so is
// filled in when read. ShardAddr is the configured address of a static
// shard, or else the first registered member's; ShardMembers are the HTTP
// addresses of every registered member, which a gateway tries when gossip
// names no leader.
type NamespaceInfo struct {
	Namespace
	ShardAddr    string   `json:"shard_addr"`
	ShardMembers []string `json:"shard_members,omitempty"`
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

// ShardMember is one node of a shard cluster, as it registered.
type ShardMember struct {
	NodeID   string `json:"node_id"`
	HTTPAddr string `json:"http_addr"`
	RaftAddr string `json:"raft_addr,omitempty"`
}

// ShardRegistration is what a shard cluster tells control about itself
// when it starts. Capacity is the most namespaces it should hold (0 means
// DefaultShardCapacity); placement ranks shards by namespaces/capacity
// and skips full ones.
type ShardRegistration struct {
	ShardID  string        `json:"shard_id"`
	Members  []ShardMember `json:"members"`
	Capacity uint64        `json:"capacity,omitempty"`
	Version  string        `json:"version,omitempty"`
}

// RegisteredShard is the stored record of a registered shard cluster.
type RegisteredShard struct {
	ID               string        `json:"id"`
	Members          []ShardMember `json:"members"`
	Capacity         uint64        `json:"capacity"`
	Version          string        `json:"version,omitempty"`
	RegisteredAt     time.Time     `json:"registered_at"`      // first registration
	LastRegisteredAt time.Time     `json:"last_registered_at"` // latest registration
}

// ShardLoad is a shard as the operator sees it: how many namespaces are
// placed on it and, for a registered shard, its members and registration.
// Static is set for a shard of Config.Shards; a shard that is neither
// configured nor registered any more but still holds namespaces is listed
// too, with capacity 0, so no namespace's shard is hidden.
type ShardLoad struct {
	ID               string        `json:"id"`
	Addr             string        `json:"addr"`
	Namespaces       uint64        `json:"namespaces"`
	Capacity         uint64        `json:"capacity"`
	Static           bool          `json:"static"`
	Members          []ShardMember `json:"members"`
	Version          string        `json:"version,omitempty"`
	RegisteredAt     *time.Time    `json:"registered_at,omitempty"`
	LastRegisteredAt *time.Time    `json:"last_registered_at,omitempty"`
	// Leader is the shard's leader as this control node's gossip pool
	// knows it; absent without gossip or while there is none.
	Leader *ShardLeader `json:"leader,omitempty"`
}

// ShardLeader is a shard's current leader as gossip reports it.
type ShardLeader struct {
	NodeID   string `json:"node_id"`
	HTTPAddr string `json:"http_addr"`
	Term     uint64 `json:"term"`
}

// signingKey is an Ed25519 key that signs API keys. It is replicated state
// so every control node signs and verifies with the same keys.
type signingKey struct {
	ID        string    `json:"kid"`
	Seed      []byte    `json:"seed"` // ed25519 private key seed
	CreatedAt time.Time `json:"created_at"`
}

package wire

import (
	"encoding/json"
	"time"
)

// Tenant administration: the namespaces and API keys of the key's tenant
// (/api/v1/namespaces, /api/v1/keys through the gateway), and tenants for
// the operator (/control/v1/tenants on the control plane).

// Namespace is one of a tenant's namespaces (GET /api/v1/namespaces/{name}
// and every answer that shows one). Retention is the namespace's recorded
// default retention for finished jobs, in the API's duration form
// (FormatDuration: "168h", "1h30m"); empty (left out) when none is set.
// DeletionProtection refuses DELETE with 409 deletion_protected while true.
type Namespace struct {
	Name               string    `json:"name"`
	Description        string    `json:"description"`
	Retention          string    `json:"retention,omitempty"`
	DeletionProtection bool      `json:"deletion_protection"`
	CreatedAt          time.Time `json:"created_at"`
	// Shard is the id of the tenant's own self-hosted shard the namespace
	// is on; absent for a hosted shard, whose id tenants never see.
	Shard string `json:"shard,omitempty"`
}

// NamespaceList is GET /api/v1/namespaces: the namespaces the key may use.
type NamespaceList struct {
	Namespaces []Namespace `json:"namespaces"`
}

// NameRequest creates a named object.
type NameRequest struct {
	Name string `json:"name"`
}

// CreateTenantRequest is POST /control/v1/tenants. Plan, when given, is
// the tenant's plan from its creation (the free plan otherwise); later
// changes take effect from the next hour.
type CreateTenantRequest struct {
	Name string `json:"name"`
	Plan string `json:"plan,omitempty"`
}

// CreateKeyRequest is POST /api/v1/keys. A key may only create keys whose
// role ranks at or below its own, for namespaces it may use; Namespaces
// may be ["*"]. ExpiresAt (RFC 3339; Time writes it) must be ahead and at
// most ten years away; absent or null: the key never expires. Description
// is free text (MaxDescription bytes of UTF-8).
type CreateKeyRequest struct {
	Name        string          `json:"name"`
	Role        string          `json:"role"`
	Namespaces  []string        `json:"namespaces"`
	ExpiresAt   json.RawMessage `json:"expires_at,omitempty"`
	Description string          `json:"description,omitempty"`
}

// Key describes an API key, never its secret. LastUsedAt is when a
// gateway last saw the key admitted, as gateways report it (every 30 s
// by default, so it trails the real last use by up to about a minute);
// nil when never seen. RotatedAt is the key's last rotation.
type Key struct {
	ID          string     `json:"id"`
	Name        string     `json:"name"`
	Description string     `json:"description"`
	Role        string     `json:"role"`
	Namespaces  []string   `json:"namespaces"`
	CreatedAt   time.Time  `json:"created_at"`
	ExpiresAt   *time.Time `json:"expires_at,omitempty"` // nil: never expires
	RevokedAt   *time.Time `json:"revoked_at,omitempty"`
	LastUsedAt  *time.Time `json:"last_used_at,omitempty"`
	RotatedAt   *time.Time `json:"rotated_at,omitempty"`
}

// KeyList is GET /api/v1/keys.
type KeyList struct {
	Keys []Key `json:"keys"`
}

// CreatedKey is a new key with its secret, shown this once.
type CreatedKey struct {
	Key
	Token string `json:"key"` // the API key to send as a bearer token
}

// Tenant is a customer account.
type Tenant struct {
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	CreatedAt time.Time `json:"created_at"`
}

// TenantList is GET /control/v1/tenants.
type TenantList struct {
	Tenants []Tenant `json:"tenants"`
}

// CreatedTenant is a new tenant with its default namespace and the owner
// key, a token shown this once.
type CreatedTenant struct {
	Tenant    Tenant `json:"tenant"`
	Namespace string `json:"namespace"`
	OwnerKey  string `json:"owner_key"`
}

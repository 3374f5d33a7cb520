package wire

import (
	"encoding/json"
	"time"
)

// Tenant administration: the namespaces and API keys of the key's tenant
// (/api/v1/namespaces, /api/v1/keys through the gateway), and tenants for
// the operator (/control/v1/tenants on the control plane).

// Namespace is one of a tenant's namespaces.
type Namespace struct {
	Name      string    `json:"name"`
	CreatedAt time.Time `json:"created_at"`
}

// NamespaceList is GET /api/v1/namespaces: the namespaces the key may use.
type NamespaceList struct {
	Namespaces []Namespace `json:"namespaces"`
}

// NameRequest creates a named object: POST /api/v1/namespaces,
// POST /control/v1/tenants.
type NameRequest struct {
	Name string `json:"name"`
}

// CreateKeyRequest is POST /api/v1/keys. A key may only create keys whose
// role ranks at or below its own, for namespaces it may use; Namespaces
// may be ["*"]. ExpiresAt (RFC 3339; Time writes it) must be ahead and at
// most ten years away; absent or null: the key never expires.
type CreateKeyRequest struct {
	Name       string          `json:"name"`
	Role       string          `json:"role"`
	Namespaces []string        `json:"namespaces"`
	ExpiresAt  json.RawMessage `json:"expires_at,omitempty"`
}

// Key describes an API key, never its secret.
type Key struct {
	ID         string     `json:"id"`
	Name       string     `json:"name"`
	Role       string     `json:"role"`
	Namespaces []string   `json:"namespaces"`
	CreatedAt  time.Time  `json:"created_at"`
	ExpiresAt  *time.Time `json:"expires_at,omitempty"` // nil: never expires
	RevokedAt  *time.Time `json:"revoked_at,omitempty"`
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

package client

import (
	"context"
	"net/url"
	"time"

	"github.com/jobbie/jobbie/tenancy"
)

// Namespace is one of a tenant's namespaces.
type Namespace struct {
	Name      string    `json:"name"`
	CreatedAt time.Time `json:"created_at"`
	ShardID   string    `json:"shard_id,omitempty"`
}

// CreateNamespace creates a namespace in the key's tenant.
func (c *Client) CreateNamespace(ctx context.Context, name string) (*Namespace, error) {
	in := struct {
		Name string `json:"name"`
	}{name}
	var out Namespace
	if _, err := c.do(ctx, "POST", "/api/v1/namespaces", in, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ListNamespaces lists the key's tenant's namespaces.
func (c *Client) ListNamespaces(ctx context.Context) ([]Namespace, error) {
	var out struct {
		Namespaces []Namespace `json:"namespaces"`
	}
	if _, err := c.do(ctx, "GET", "/api/v1/namespaces", nil, &out); err != nil {
		return nil, err
	}
	return out.Namespaces, nil
}

// CreateKeyRequest describes a new API key. A key may only create keys
// whose role ranks at or below its own, for namespaces it may use;
// Namespaces may be ["*"] for every namespace of the tenant.
//
// ExpiresAt, when set, is when the key stops working: in the future and at
// most ten years ahead, kept to the whole second. Nil means it never
// expires.
type CreateKeyRequest struct {
	Name       string       `json:"name"`
	Role       tenancy.Role `json:"role"`
	Namespaces []string     `json:"namespaces"`
	ExpiresAt  *time.Time   `json:"expires_at,omitempty"`
}

// Key describes an API key (never its secret). ExpiresAt is nil for a key
// that never expires.
type Key struct {
	ID         string       `json:"id"`
	Name       string       `json:"name"`
	Role       tenancy.Role `json:"role"`
	Namespaces []string     `json:"namespaces"`
	CreatedAt  time.Time    `json:"created_at"`
	ExpiresAt  *time.Time   `json:"expires_at,omitempty"`
	RevokedAt  *time.Time   `json:"revoked_at,omitempty"`
}

// CreatedKey is a new key with its secret, which is shown only once.
type CreatedKey struct {
	Key
	Token string `json:"key"` // the API key to send as a bearer token
}

// CreateKey mints an API key in the key's tenant.
func (c *Client) CreateKey(ctx context.Context, req CreateKeyRequest) (*CreatedKey, error) {
	var out CreatedKey
	if _, err := c.do(ctx, "POST", "/api/v1/keys", req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ListKeys lists the tenant's API keys, revoked ones included.
func (c *Client) ListKeys(ctx context.Context) ([]Key, error) {
	var out struct {
		Keys []Key `json:"keys"`
	}
	if _, err := c.do(ctx, "GET", "/api/v1/keys", nil, &out); err != nil {
		return nil, err
	}
	return out.Keys, nil
}

// DeleteKey revokes an API key; it stops working within seconds.
func (c *Client) DeleteKey(ctx context.Context, id string) error {
	_, err := c.do(ctx, "DELETE", "/api/v1/keys/"+url.PathEscape(id), nil, nil)
	return err
}

package client

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"time"

	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// Namespace is one of a tenant's namespaces.
type Namespace = wire.Namespace

// CreateNamespace creates a namespace in the key's tenant.
func (c *Client) CreateNamespace(ctx context.Context, name string) (*Namespace, error) {
	var out Namespace
	if _, err := c.do(ctx, "POST", "/api/v1/namespaces", wire.NameRequest{Name: name}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ListNamespaces lists the key's tenant's namespaces.
func (c *Client) ListNamespaces(ctx context.Context) ([]Namespace, error) {
	var out wire.NamespaceList
	if _, err := c.do(ctx, "GET", "/api/v1/namespaces", nil, &out); err != nil {
		return nil, err
	}
	return out.Namespaces, nil
}

// CreateKeyRequest describes a new API key. A key may only create keys
// whose role ranks at or below its own, for namespaces it may use;
// Namespaces may be ["*"] for every namespace of the tenant, and nil means
// the calling key's default namespace.
type CreateKeyRequest struct {
	Name       string
	Role       tenancy.Role
	Namespaces []string
	// ExpiresAt, when set, is when the key stops working: in the future
	// and at most ten years ahead, kept to the whole second. Nil means it
	// never expires.
	ExpiresAt *time.Time
}

// errZeroExpiry refuses an ExpiresAt that points at the zero time, which
// would otherwise be left out and so mean "never expires".
var errZeroExpiry = errors.New("ExpiresAt is the zero time; leave it nil for a key that never expires")

// MarshalJSON writes the request as a wire.CreateKeyRequest.
func (r CreateKeyRequest) MarshalJSON() ([]byte, error) {
	in := wire.CreateKeyRequest{Name: r.Name, Role: string(r.Role), Namespaces: r.Namespaces}
	if r.ExpiresAt != nil {
		if r.ExpiresAt.IsZero() {
			return nil, errZeroExpiry
		}
		in.ExpiresAt = wire.Time(*r.ExpiresAt)
	}
	return json.Marshal(in)
}

// Key describes an API key (never its secret). ExpiresAt is nil for a key
// that never expires.
type Key = wire.Key

// CreatedKey is a new key with its secret (Token), which is shown only
// once.
type CreatedKey = wire.CreatedKey

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
	var out wire.KeyList
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

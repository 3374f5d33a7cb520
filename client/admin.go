package client

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"time"

	"github.com/jobbie/jobbie/wire"
)

// Namespace is one of a tenant's namespaces: its Description, its
// Retention (the namespace's recorded default for finished jobs, in the
// API's duration form such as "168h"; "" for none: time.ParseDuration
// reads it) and whether DeletionProtection is on.
type Namespace = wire.Namespace

// CreateNamespace creates a namespace in the key's tenant, with no
// description, retention or deletion protection (CreateNamespaceWith
// sets them).
func (c *Client) CreateNamespace(ctx context.Context, name string) (*Namespace, error) {
	return c.CreateNamespaceWith(ctx, CreateNamespaceRequest{Name: name})
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
	Name string
	// Role is a built-in role (wire.RoleProducer …) or the name of one
	// of the tenant's custom roles (wire.RoleName("support")). A key with
	// a custom role, or minted by one, may grant nothing the calling key
	// does not hold in its namespaces.
	Role       wire.RoleName
	Namespaces []string
	// Description is free text, at most 1024 bytes.
	Description string
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
	in := wire.CreateKeyRequest{Name: r.Name, Role: string(r.Role), Namespaces: r.Namespaces, Description: r.Description}
	if r.ExpiresAt != nil {
		if r.ExpiresAt.IsZero() {
			return nil, errZeroExpiry
		}
		in.ExpiresAt = wire.Time(*r.ExpiresAt)
	}
	return json.Marshal(in)
}

// Key describes an API key (never its secret). ExpiresAt is nil for a key
// that never expires; LastUsedAt, nil for a key never used, is when a
// gateway last saw it, reported every 30 seconds or so: it trails the
// key's real last use by up to about a minute.
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

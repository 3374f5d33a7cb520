package client

import (
	"context"
	"net/url"
	"time"

	"github.com/jobbie/jobbie/wire"
)

// Error codes of namespace administration (Error.Code).
const (
	CodeDeletionProtected = string(wire.CodeDeletionProtected)
	CodeNamespaceNotEmpty = string(wire.CodeNamespaceNotEmpty)
)

// RotatedKey is a key with its new secret (Token), shown only once, and
// PreviousKeyValidUntil, when the secret it replaced stops working.
type RotatedKey = wire.RotatedKey

func keyPath(id string) string { return "/api/v1/keys/" + url.PathEscape(id) }

// GetKey returns an API key of the tenant (never its secret). A key
// beyond the calling key's namespaces, or another tenant's, is not found.
func (c *Client) GetKey(ctx context.Context, id string) (*Key, error) {
	var out Key
	if _, err := c.do(ctx, "GET", keyPath(id), nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// RotateKey gives a key a new secret, for the same id, name, role,
// namespaces and expiry. The secret it replaces keeps working for grace
// (0: it stops at once; at most 7 days), then is refused.
func (c *Client) RotateKey(ctx context.Context, id string, grace time.Duration) (*RotatedKey, error) {
	var out RotatedKey
	in := wire.RotateKeyRequest{GracePeriod: wire.Duration(grace)}
	if _, err := c.do(ctx, "POST", keyPath(id)+"/rotate", in, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

package client

import (
	"context"
	"encoding/json"
	"net/url"
	"time"

	"github.com/jobbie/jobbie/wire"
)

// CreateNamespaceRequest describes a new namespace. Retention, when not
// zero, is its default retention for finished jobs, 1m to 87600h (ten
// years); DeletionProtection refuses DeleteNamespace until it is turned
// off.
type CreateNamespaceRequest struct {
	Name               string
	Description        string
	Retention          time.Duration
	DeletionProtection bool
}

// MarshalJSON writes the request as a wire.CreateNamespaceRequest.
func (r CreateNamespaceRequest) MarshalJSON() ([]byte, error) {
	return json.Marshal(wire.CreateNamespaceRequest{Name: r.Name, Description: r.Description,
		Retention: wire.Duration(r.Retention), DeletionProtection: r.DeletionProtection})
}

// CreateNamespaceWith creates a namespace in the key's tenant with its
// settings.
func (c *Client) CreateNamespaceWith(ctx context.Context, req CreateNamespaceRequest) (*Namespace, error) {
	var out Namespace
	if _, err := c.do(ctx, "POST", "/api/v1/namespaces", req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// UpdateNamespaceRequest changes a namespace's settings: a nil field is
// left as it is. A Retention of 0 removes the namespace's retention; an
// empty Description removes its description.
type UpdateNamespaceRequest struct {
	Description        *string
	Retention          *time.Duration
	DeletionProtection *bool
}

// MarshalJSON writes the request as a wire.UpdateNamespaceRequest: only
// the fields set, and null for a Retention of 0.
func (r UpdateNamespaceRequest) MarshalJSON() ([]byte, error) {
	var w wire.UpdateNamespaceRequest
	var err error
	if r.Description != nil {
		if w.Description, err = json.Marshal(*r.Description); err != nil {
			return nil, err
		}
	}
	if r.Retention != nil {
		w.Retention = wire.Duration(*r.Retention)
		if w.Retention == nil {
			w.Retention = json.RawMessage("null")
		}
	}
	if r.DeletionProtection != nil {
		w.DeletionProtection, _ = json.Marshal(*r.DeletionProtection) // a bool: cannot fail
	}
	return json.Marshal(w)
}

func namespacePath(name string) string { return "/api/v1/namespaces/" + url.PathEscape(name) }

// GetNamespace returns a namespace of the key's tenant. One the key may
// not use, or another tenant's, is not found (IsNotFound).
func (c *Client) GetNamespace(ctx context.Context, name string) (*Namespace, error) {
	var out Namespace
	if _, err := c.do(ctx, "GET", namespacePath(name), nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// UpdateNamespace changes the settings req names and returns the
// namespace as it is then (PATCH).
func (c *Client) UpdateNamespace(ctx context.Context, name string, req UpdateNamespaceRequest) (*Namespace, error) {
	var out Namespace
	if _, err := c.do(ctx, "PATCH", namespacePath(name), req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// DeleteNamespace deletes a namespace. It fails with code
// deletion_protected (409) while its deletion protection is on, and,
// unless force, with namespace_not_empty (409) while it holds jobs,
// queues or schedules; with force they are deleted with it.
func (c *Client) DeleteNamespace(ctx context.Context, name string, force bool) error {
	path := namespacePath(name)
	if force {
		path += "?force=true"
	}
	_, err := c.do(ctx, "DELETE", path, nil, nil)
	return err
}

package client

import (
	"context"

	"github.com/jobbie/jobbie/wire"
)

// CreateNamespaceOnWith is CreateNamespaceWith on shard, one of the
// tenant's self-hosted shards (another tenant's, or an unknown one, is not
// found): the namespace and its settings in one request.
func (c *Client) CreateNamespaceOnWith(ctx context.Context, req CreateNamespaceRequest, shard string) (*Namespace, error) {
	var out Namespace
	body := struct {
		wire.CreateNamespaceRequest
		Shard string `json:"shard"`
	}{wire.CreateNamespaceRequest{Name: req.Name, Description: req.Description,
		Retention: wire.Duration(req.Retention), DeletionProtection: req.DeletionProtection}, shard}
	if _, err := c.do(ctx, "POST", "/api/v1/namespaces", body, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

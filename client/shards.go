package client

import (
	"context"
	"net/url"
	"time"

	"github.com/jobbie/jobbie/wire"
)

// Self-hosted shard clusters: a tenant runs shard nodes in its own network
// (`jobbie shard --join-token`), which dial out to the hosted service.

// JoinToken is a minted token (shown once) and the new shard's id.
type JoinToken = wire.JoinToken

// OwnedShard is one of the tenant's self-hosted shards.
type OwnedShard = wire.OwnedShard

// CreateJoinToken mints a join token for a new self-hosted shard of
// nodes nodes (1-5; 0 is 1), valid for expiresIn (1m-24h; 0 is 1h). Owner
// keys only.
func (c *Client) CreateJoinToken(ctx context.Context, name string, expiresIn time.Duration, nodes int) (*JoinToken, error) {
	var out JoinToken
	req := wire.CreateJoinTokenRequest{Name: name, ExpiresIn: wire.Duration(expiresIn), Nodes: nodes}
	if _, err := c.do(ctx, "POST", "/api/v1/shards/join-tokens", req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Shards lists the tenant's self-hosted shards.
func (c *Client) Shards(ctx context.Context) ([]OwnedShard, error) {
	var out wire.OwnedShardList
	if _, err := c.do(ctx, "GET", "/api/v1/shards", nil, &out); err != nil {
		return nil, err
	}
	return out.Shards, nil
}

// RevokeShard removes a self-hosted shard: its nodes are refused from
// then on. A shard that still holds namespaces is a conflict. Owner keys
// only.
func (c *Client) RevokeShard(ctx context.Context, id string) error {
	_, err := c.do(ctx, "DELETE", "/api/v1/shards/"+url.PathEscape(id), nil, nil)
	return err
}

// AddShardNodes mints a token that joins nodes more nodes (1-5; 0 is 1)
// to the tenant's self-hosted shard shardID, valid for expiresIn (1m-24h;
// 0 is 1h): to replace a removed node or grow the cluster. Each joins
// under a node id the shard never had. A shard with an unexpired token
// that has nodes left, or that would pass 7 nodes, is a conflict. Owner
// keys only.
func (c *Client) AddShardNodes(ctx context.Context, shardID string, nodes int, expiresIn time.Duration) (*JoinToken, error) {
	var out JoinToken
	req := wire.AddNodesRequest{Nodes: nodes, ExpiresIn: wire.Duration(expiresIn)}
	if _, err := c.do(ctx, "POST", "/api/v1/shards/"+url.PathEscape(shardID)+"/join-tokens", req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// RemoveShardNode removes node from the tenant's self-hosted shard
// shardID for good (its id is never joined again): its tunnels are cut
// and its certificate is renewed no more. The shard's last node is a
// conflict. Taking it out of the shard's Raft group is done at the
// shard (`jobbie shard remove`). Owner keys only.
func (c *Client) RemoveShardNode(ctx context.Context, shardID, node string) error {
	_, err := c.do(ctx, "DELETE", "/api/v1/shards/"+url.PathEscape(shardID)+"/nodes/"+url.PathEscape(node), nil, nil)
	return err
}

// CreateNamespaceOn creates a namespace on shard, one of the tenant's
// self-hosted shards (another tenant's, or an unknown one, is not found).
func (c *Client) CreateNamespaceOn(ctx context.Context, name, shard string) (*Namespace, error) {
	var out Namespace
	req := struct {
		Name  string `json:"name"`
		Shard string `json:"shard"`
	}{name, shard}
	if _, err := c.do(ctx, "POST", "/api/v1/namespaces", req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

package client

import (
	"context"

	"github.com/jobbie/jobbie/wire"
)

// ClusterHealth is the health of the shard cluster that holds the
// namespace, as the node answering sees it: its nodes by id, their roles
// and whether each is reachable. It names no addresses.
type ClusterHealth = wire.ClusterHealth

// ClusterNode is one member of the shard's Raft group.
type ClusterNode = wire.ClusterNode

// ClusterHealth returns the health of the namespace's shard cluster. It
// needs a key that may read queues.
func (c *Client) ClusterHealth(ctx context.Context) (*ClusterHealth, error) {
	var out ClusterHealth
	if _, err := c.do(ctx, "GET", "/api/v1/cluster", nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

package client

import (
	"context"

	"github.com/jobbie/jobbie/wire"
)

// WorkerInfo is a worker the namespace's shard has seen fetch or
// heartbeat. ActiveJobs counts the jobs leased to it and not yet settled;
// ActiveJobIDs lists up to 100 of them. Status is "active", or "gone" once
// unseen for two minutes.
type WorkerInfo = wire.Worker

// ListWorkers lists the workers of the namespace, by id.
func (c *Client) ListWorkers(ctx context.Context) ([]WorkerInfo, error) {
	var out wire.WorkerList
	if _, err := c.do(ctx, "GET", "/api/v1/workers", nil, &out); err != nil {
		return nil, err
	}
	return out.Workers, nil
}

package client

import (
	"context"
	"time"
)

// WorkerInfo is a worker the namespace's shard has seen fetch or heartbeat.
type WorkerInfo struct {
	ID       string   `json:"id"`
	Hostname string   `json:"hostname"`
	Queues   []string `json:"queues"`
	// ActiveJobs counts the jobs leased to the worker and not yet settled;
	// ActiveJobIDs lists up to 100 of them.
	ActiveJobs   int       `json:"active_jobs"`
	ActiveJobIDs []string  `json:"active_job_ids"`
	LastSeen     time.Time `json:"last_seen"`
	// Status is "active", or "gone" once unseen for two minutes.
	Status string `json:"status"`
}

// ListWorkers lists the workers of the namespace, by id.
func (c *Client) ListWorkers(ctx context.Context) ([]WorkerInfo, error) {
	var out struct {
		Workers []WorkerInfo `json:"workers"`
	}
	if _, err := c.do(ctx, "GET", "/api/v1/workers", nil, &out); err != nil {
		return nil, err
	}
	return out.Workers, nil
}

package client

import (
	"context"
	"net/url"

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

// DrainWorker asks worker id to stop taking jobs: its fetches get none
// from then on (ErrWorkerDraining) and a Worker under that id, over HTTP
// or the worker stream, finishes what it holds and returns from Run. The
// drain lasts while the shard's leader does (docs/api/workers-and-events.md).
func (c *Client) DrainWorker(ctx context.Context, id string) (*WorkerDrain, error) {
	var out WorkerDrain
	if _, err := c.do(ctx, "POST", "/api/v1/workers/"+url.PathEscape(id)+"/drain", nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// WorkerDrain is the answer to DrainWorker.
type WorkerDrain = wire.WorkerDrainResponse

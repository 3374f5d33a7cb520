package shard

import (
	"context"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/shard/job"
	"github.com/jobbie/jobbie/tenancy"
)

// The engine side of job management: validate, propose, return the
// handler's outcome. An unknown id (or one of another namespace) is 404; a
// state the operation does not allow is 409 naming the state.

// RetryJob puts a completed, dead or cancelled job back to pending.
func (e *Engine) RetryJob(ctx context.Context, ns, id string) (job.State, error) {
	res, err := e.jobOp(ctx, cmdJobRetry, &jobOpCmd{NS: ns, ID: id})
	if err != nil {
		return 0, err
	}
	return res.(job.State), nil
}

// CancelJob cancels a job; it returns "cancelled", or "cancelling" for an
// active job whose worker is told by its next heartbeat.
func (e *Engine) CancelJob(ctx context.Context, ns, id string) (string, error) {
	res, err := e.jobOp(ctx, cmdJobCancel, &jobOpCmd{NS: ns, ID: id})
	if err != nil {
		return "", err
	}
	return res.(string), nil
}

// MoveRequest is the body of POST /api/v1/jobs/{id}/move.
type MoveRequest struct {
	Queue string `json:"queue"`
}

// MoveJob moves a job that is not active to another queue; it returns the
// job's state.
func (e *Engine) MoveJob(ctx context.Context, ns, id string, r *MoveRequest) (job.State, error) {
	if r.Queue == "" {
		return 0, apierr.Field("queue", "queue is required")
	}
	if err := tenancy.ValidateQueue(r.Queue); err != nil {
		return 0, apierr.Field("queue", "%v", err)
	}
	res, err := e.jobOp(ctx, cmdJobMove, &jobOpCmd{NS: ns, ID: id, Queue: r.Queue})
	if err != nil {
		return 0, err
	}
	return res.(job.State), nil
}

// DeleteJob removes a job that is not active, with all its index entries.
// An active job is refused (409): cancel it first, so no worker holds a
// job that no longer exists.
func (e *Engine) DeleteJob(ctx context.Context, ns, id string) error {
	_, err := e.jobOp(ctx, cmdJobDelete, &jobOpCmd{NS: ns, ID: id})
	return err
}

func (e *Engine) jobOp(ctx context.Context, t replica.CommandType, c *jobOpCmd) (any, error) {
	if err := namespaceOK(c.NS); err != nil {
		return nil, err
	}
	if err := jobIDOK(c.ID); err != nil {
		return nil, err
	}
	return e.propose(ctx, t, c)
}

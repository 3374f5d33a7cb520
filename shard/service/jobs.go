package service

import (
	"context"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/shard/engine"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// Job management: validate, propose, return the handler's outcome. An
// unknown id (or one of another namespace) is 404; a state the operation
// does not allow is 409 naming the state. A job outside a limited queue
// scope is 404 too (scope.go).

// GetJob reads a job from local state.
func (s *Service) GetJob(ns string, sc tenancy.QueueScope, id string) (*wire.JobDetail, error) {
	if err := namespaceOK(ns); err != nil {
		return nil, err
	}
	if err := jobIDOK(id); err != nil {
		return nil, apierr.New(apierr.NotFound, "job %s not found", id)
	}
	j, err := engine.ReadJob(s.node.DB(), ns, id)
	if err != nil {
		return nil, err
	}
	if !sc.Allows(j.Queue) {
		return nil, jobNotFound(id)
	}
	if j, err = s.openJob(ns, j); err != nil {
		return nil, err
	}
	d := detailView(j)
	if err := s.jobAI(ns, d); err != nil {
		return nil, err
	}
	return d, nil
}

// RetryJob puts a completed, dead or cancelled job back to pending.
func (s *Service) RetryJob(ctx context.Context, ns string, sc tenancy.QueueScope, id string) (*wire.JobOpResponse, error) {
	st, err := jobOp(ctx, s, sc, engine.JobRetry, &engine.JobOpCmd{NS: ns, ID: id})
	if err != nil {
		return nil, err
	}
	return &wire.JobOpResponse{JobID: id, Status: st.String()}, nil
}

// CancelJob cancels a job: wire.CancelDone, or wire.CancelRequested for
// an active job whose worker is told by its next heartbeat.
func (s *Service) CancelJob(ctx context.Context, ns string, sc tenancy.QueueScope, id string) (string, error) {
	return jobOp(ctx, s, sc, engine.JobCancel, &engine.JobOpCmd{NS: ns, ID: id})
}

// MoveJob moves a job that is not active to another queue. Under a
// limited scope both the job's queue and the target must be in it.
func (s *Service) MoveJob(ctx context.Context, ns string, sc tenancy.QueueScope, id string, r *wire.MoveRequest) (*wire.JobOpResponse, error) {
	if r.Queue == "" {
		return nil, apierr.Field("queue", "queue is required")
	}
	if err := tenancy.ValidateQueue(r.Queue); err != nil {
		return nil, apierr.Field("queue", "%v", err)
	}
	if err := AllowQueue(sc, "queue", r.Queue); err != nil {
		return nil, err
	}
	st, err := jobOp(ctx, s, sc, engine.JobMove, &engine.JobOpCmd{NS: ns, ID: id, Queue: r.Queue})
	if err != nil {
		return nil, err
	}
	return &wire.JobOpResponse{JobID: id, Status: st.String(), Queue: r.Queue}, nil
}

// DeleteJob removes a job that is not active, with all its index entries.
// An active job is refused (409): cancel it first, so no worker holds a
// job that no longer exists. An unfinished job deleted counts as failed
// for its batch and for the jobs that depend on it.
func (s *Service) DeleteJob(ctx context.Context, ns string, sc tenancy.QueueScope, id string) error {
	_, err := jobOp(ctx, s, sc, engine.JobDiscard, &engine.JobOpCmd{NS: ns, ID: id})
	return err
}

func jobOp[R any](ctx context.Context, s *Service, sc tenancy.QueueScope, op replica.Op[engine.JobOpCmd, R], c *engine.JobOpCmd) (R, error) {
	var zero R
	if err := namespaceOK(c.NS); err != nil {
		return zero, err
	}
	if err := jobIDOK(c.ID); err != nil {
		return zero, err
	}
	if err := s.scopedJob(c.NS, c.ID, sc); err != nil {
		return zero, err
	}
	return op.Propose(ctx, s.node, c)
}

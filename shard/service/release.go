package service

import (
	"context"
	"fmt"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/shard/engine"
	"github.com/jobbie/jobbie/shard/job"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// Release gives back leases the worker was handed but never received:
// whoever held the worker's connection (a gateway, or a shard node that
// forwarded its fetch) found it closed when the fetch's answer came. Only
// leases held by r.WorkerID for the attempts named are released, and
// under a limited scope only those of jobs in it (the others are left
// alone, as for a job that does not exist).
func (s *Service) Release(ctx context.Context, ns string, sc tenancy.QueueScope, r *wire.ReleaseRequest) (*wire.ReleaseResponse, error) {
	if err := namespaceOK(ns); err != nil {
		return nil, err
	}
	if len(r.WorkerID) > wire.MaxWorkerID {
		return nil, apierr.Field("worker_id", "worker_id must be at most %d bytes", wire.MaxWorkerID)
	}
	if len(r.Jobs) == 0 || len(r.Jobs) > wire.MaxFetchBatch {
		return nil, apierr.Field("jobs", "jobs must name 1 to %d leases", wire.MaxFetchBatch)
	}
	c := &engine.ReleaseCmd{NS: ns, WorkerID: r.WorkerID, Jobs: make([]engine.ReleaseItem, 0, len(r.Jobs))}
	for i, e := range r.Jobs {
		if err := jobIDOK(e.JobID); err != nil {
			return nil, apierr.Field(fmt.Sprintf("jobs[%d].job_id", i), "%q is not a job id", e.JobID)
		}
		if e.Attempt < 1 {
			return nil, apierr.Field(fmt.Sprintf("jobs[%d].attempt", i), "attempt must be the fetched job's attempt, 1 or more")
		}
		l, err := leaseOf(fmt.Sprintf("jobs[%d].lease_token", i), e.LeaseToken)
		if err != nil {
			return nil, err
		}
		if l != (job.LeaseID{}) && l.Attempt != e.Attempt {
			return nil, apierr.Field(fmt.Sprintf("jobs[%d].lease_token", i), "the lease_token names attempt %d, not %d", l.Attempt, e.Attempt)
		}
		if s.inScope(ns, e.JobID, sc) {
			c.Jobs = append(c.Jobs, engine.ReleaseItem{ID: e.JobID, Attempt: e.Attempt, Lease: l})
		}
	}
	out := &wire.ReleaseResponse{Released: []string{}}
	if len(c.Jobs) == 0 {
		return out, nil
	}
	done, err := engine.ReleaseFor(c).Propose(ctx, s.node, c)
	if err != nil {
		return nil, err
	}
	for i, ok := range done {
		if ok {
			out.Released = append(out.Released, c.Jobs[i].ID)
		}
	}
	return out, nil
}

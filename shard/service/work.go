package service

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/shard/engine"
	"github.com/jobbie/jobbie/shard/job"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// Ack completes an active job with its result. It returns the state the
// job settled in: completed, or cancelled when a cancel was requested
// while it ran.
func (s *Service) Ack(ctx context.Context, ns string, sc tenancy.QueueScope, lim Limits, id string, r *wire.AckRequest) (string, error) {
	if err := namespaceOK(ns); err != nil {
		return "", err
	}
	if err := jobIDOK(id); err != nil {
		return "", err
	}
	if err := s.scopedJob(ns, id, sc); err != nil {
		return "", err
	}
	res, err := lim.checkJSON("result", r.Result, wire.MaxPayloadBytes)
	if err != nil {
		return "", err
	}
	if err := stepStatusOK("step_status", r.StepStatus); err != nil {
		return "", err
	}
	l, err := leaseOf("lease_token", r.LeaseToken)
	if err != nil {
		return "", err
	}
	u, err := usageOf("usage", r.Usage)
	if err != nil {
		return "", err
	}
	if res, err = s.sealWork(ns, fieldResult, id, res); err != nil {
		return "", err
	}
	ac := &engine.AckCmd{NS: ns, ID: id, WorkerID: r.WorkerID, Result: res, Step: r.StepStatus, Lease: l, Usage: u}
	st, err := engine.AckFor(ac).Propose(ctx, s.node, ac)
	if err != nil {
		return "", err
	}
	return st.String(), nil
}

// AckBatch acks each job in one command. Bad input (no acks, too many, a
// result over its limit) refuses the whole batch; a job that is unknown
// or not active under this worker gets its own error and the rest are
// acked (a job outside a limited scope is unknown). Results are in request
// order.
func (s *Service) AckBatch(ctx context.Context, ns string, sc tenancy.QueueScope, lim Limits, r *wire.AckBatchRequest) ([]wire.AckBatchResult, error) {
	if err := namespaceOK(ns); err != nil {
		return nil, err
	}
	if len(r.Acks) == 0 {
		return nil, apierr.Field("acks", "acks must hold at least one ack")
	}
	if len(r.Acks) > wire.MaxAckBatch {
		return nil, apierr.Field("acks", "at most %d acks per batch; got %d", wire.MaxAckBatch, len(r.Acks))
	}
	out := make([]wire.AckBatchResult, len(r.Acks))
	c := &engine.AckBatchCmd{NS: ns, WorkerID: r.WorkerID, Items: make([]engine.AckBatchItem, 0, len(r.Acks))}
	at := make([]int, 0, len(r.Acks)) // out index of each command item
	for i, a := range r.Acks {
		// Checked without its place in the batch, so valid acks build no
		// field names; a refused one is checked again with it.
		res, l, u, err := ackValues(lim, &a, "")
		if err != nil {
			if _, _, _, named := ackValues(lim, &a, fmt.Sprintf("acks[%d].", i)); named != nil {
				err = named
			}
			return nil, err
		}
		out[i].JobID = a.JobID
		if err := jobIDOK(a.JobID); err != nil {
			out[i].Error = ackBatchError(apierr.From(err))
			continue
		}
		if err := s.scopedJob(ns, a.JobID, sc); err != nil {
			out[i].Error = ackBatchError(apierr.From(err))
			continue
		}
		if res, err = s.sealWork(ns, fieldResult, a.JobID, res); err != nil {
			return nil, err
		}
		c.Items = append(c.Items, engine.AckBatchItem{ID: a.JobID, Result: res, Step: a.StepStatus, Lease: l, Usage: u})
		at = append(at, i)
	}
	if len(c.Items) == 0 {
		return out, nil
	}
	res, err := engine.AckBatchFor(c).Propose(ctx, s.node, c)
	if err != nil {
		return nil, err
	}
	for k, o := range res {
		i := at[k]
		if o.Err != nil {
			out[i].Error = ackBatchError(o.Err)
		} else {
			out[i].Status = o.State.String()
		}
	}
	return out, nil
}

// ackValues checks the values an ack of a batch stores; prefix prefixes
// field names in errors.
func ackValues(lim Limits, a *wire.AckBatchEntry, prefix string) ([]byte, job.LeaseID, *engine.AIUsage, error) {
	res, err := lim.checkJSON(prefix+"result", a.Result, wire.MaxPayloadBytes)
	if err != nil {
		return nil, job.LeaseID{}, nil, err
	}
	if err := stepStatusOK(prefix+"step_status", a.StepStatus); err != nil {
		return nil, job.LeaseID{}, nil, err
	}
	l, err := leaseOf(prefix+"lease_token", a.LeaseToken)
	if err != nil {
		return nil, job.LeaseID{}, nil, err
	}
	u, err := usageOf(prefix+"usage", a.Usage)
	if err != nil {
		return nil, job.LeaseID{}, nil, err
	}
	return res, l, u, nil
}

func ackBatchError(e *apierr.Error) *wire.AckBatchError {
	return &wire.AckBatchError{Code: e.Code, Message: e.Message}
}

// stepStatusOK validates an ack's step_status.
func stepStatusOK(field, s string) error {
	switch s {
	case "", wire.StepContinue, wire.StepExit:
		return nil
	}
	return apierr.Field(field, "step_status must be continue or exit")
}

// leaseOf reads the lease_token a fetch handed out; "" names no lease (the
// call then settles whatever lease the job holds, as before tokens).
func leaseOf(field, token string) (job.LeaseID, error) {
	if token == "" {
		return job.LeaseID{}, nil
	}
	l, ok := job.ParseLeaseToken(token)
	if !ok {
		return l, apierr.Field(field, "%s must be the lease_token a fetch returned, unchanged", field)
	}
	return l, nil
}

// Fail records a failed attempt; the job retries after its backoff or dies
// (at once when the failure is non-retryable).
func (s *Service) Fail(ctx context.Context, ns string, sc tenancy.QueueScope, id string, r *wire.FailRequest) (*wire.FailResponse, error) {
	if err := namespaceOK(ns); err != nil {
		return nil, err
	}
	if err := jobIDOK(id); err != nil {
		return nil, err
	}
	if err := s.scopedJob(ns, id, sc); err != nil {
		return nil, err
	}
	if len(r.Error)+len(r.Backtrace) > wire.MaxErrorBytes {
		return nil, apierr.OfField(apierr.TooLarge, "backtrace", "error and backtrace together must be at most %d bytes", wire.MaxErrorBytes)
	}
	l, err := leaseOf("lease_token", r.LeaseToken)
	if err != nil {
		return nil, err
	}
	u, err := usageOf("usage", r.Usage)
	if err != nil {
		return nil, err
	}
	text, trace, err := s.sealFailure(ns, id, r.Error, r.Backtrace)
	if err != nil {
		return nil, err
	}
	fc := &engine.FailCmd{NS: ns, ID: id, WorkerID: r.WorkerID, Error: text, Backtrace: trace, Lease: l, NonRetryable: r.NonRetryable, Usage: u}
	out, err := engine.FailFor(fc).Propose(ctx, s.node, fc)
	if err != nil {
		return nil, err
	}
	resp := &wire.FailResponse{Status: out.State.String(), AttemptsRemaining: out.Remaining, Reason: out.Reason}
	if out.State == job.Retrying || out.State == job.Pending {
		resp.NextAttemptAt = ts(out.NextAttempt)
	}
	return resp, nil
}

// Heartbeat extends leases and stores progress and checkpoints; it returns
// each job's status (wire.Heartbeat*). A job outside a limited scope is
// lost, as an unknown one is.
func (s *Service) Heartbeat(ctx context.Context, ns string, sc tenancy.QueueScope, lim Limits, r *wire.HeartbeatRequest) (map[string]string, error) {
	if err := namespaceOK(ns); err != nil {
		return nil, err
	}
	if len(r.Jobs) == 0 {
		return nil, apierr.Field("jobs", "jobs must name at least one job")
	}
	if len(r.Jobs) > wire.MaxHeartbeatJobs {
		return nil, apierr.Field("jobs", "at most %d jobs per heartbeat", wire.MaxHeartbeatJobs)
	}
	c := &engine.HeartbeatCmd{NS: ns, WorkerID: r.WorkerID}
	out := make(map[string]string, len(r.Jobs))
	for id, ent := range r.Jobs {
		if err := jobIDOK(id); err != nil {
			return nil, err
		}
		p, err := lim.checkJSON("progress", ent.Progress, wire.MaxProgressBytes)
		if err != nil {
			return nil, err
		}
		cp, err := lim.checkJSON("checkpoint", ent.Checkpoint, wire.MaxCheckpointBytes)
		if err != nil {
			return nil, err
		}
		l, err := leaseOf("jobs."+id+".lease_token", ent.LeaseToken)
		if err != nil {
			return nil, err
		}
		u, err := usageOf("jobs."+id+".usage", ent.Usage)
		if err != nil {
			return nil, err
		}
		if !s.inScope(ns, id, sc) {
			out[id] = wire.HeartbeatLost
			continue
		}
		if p, err = s.sealWork(ns, fieldProgress, id, p); err != nil {
			return nil, err
		}
		if cp, err = s.sealWork(ns, fieldCheckpoint, id, cp); err != nil {
			return nil, err
		}
		c.Jobs = append(c.Jobs, engine.HeartbeatItem{ID: id, Progress: p, Checkpoint: cp, Lease: l, Usage: u})
	}
	if len(c.Jobs) == 0 {
		return out, nil
	}
	statuses, err := engine.HeartbeatFor(c).Propose(ctx, s.node, c)
	if err != nil {
		return nil, err
	}
	for i, it := range c.Jobs {
		out[it.ID] = statuses[i]
	}
	return out, nil
}

func durationOf(ns int64) time.Duration { return time.Duration(ns) }

// ClientWorkerID refuses a worker id a client may not use: those starting
// "push:" are the push dispatcher's (engine.PushWorker), whose settles are
// metered as push deliveries, so a client's would be counted as one. The
// HTTP routes that take a worker id check it; the dispatcher, which calls
// the service directly, does not pass through them.
func ClientWorkerID(id string) error {
	if p := engine.PushWorker(""); strings.HasPrefix(id, p) {
		return apierr.Field("worker_id", "worker_id must not start with %q: those ids are the push dispatcher's", p)
	}
	return nil
}

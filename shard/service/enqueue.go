package service

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/shard/engine"
	"github.com/jobbie/jobbie/shard/job"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// BatchIDLen is the length of a batch id: "batch_" and a ULID.
const BatchIDLen = 6 + 26

// maxChainBytes bounds a chain definition, payloads included (and the
// plan's max_payload_bytes, Limits.size).
const maxChainBytes = wire.MaxPayloadBytes

// Enqueue validates and inserts one job. Existing is set when its unique
// key matched a job that still holds it (that job's id is answered).
func (s *Service) Enqueue(ctx context.Context, ns string, sc tenancy.QueueScope, lim Limits, r *wire.EnqueueRequest) (*wire.EnqueueResponse, error) {
	res, _, err := s.enqueue(ctx, ns, sc, lim, []wire.EnqueueRequest{*r}, false, nil)
	if err != nil {
		return nil, err
	}
	out := enqueueResponse(res[0])
	return &out, nil
}

// EnqueueBatch inserts jobs atomically, all of them or none, as one batch
// with a callback when r.Batch is set.
func (s *Service) EnqueueBatch(ctx context.Context, ns string, sc tenancy.QueueScope, lim Limits, r *wire.BatchRequest) (*wire.BatchResponse, error) {
	var b *engine.BatchRecord
	if r.Batch != nil {
		var err error
		if b, err = batchRecord(lim, r.Batch, s.NewID("batch_")); err != nil {
			return nil, err
		}
		if err := AllowQueue(sc, "batch.callback_queue", b.CallbackQueue); err != nil {
			return nil, err
		}
	}
	res, batchID, err := s.enqueue(ctx, ns, sc, lim, r.Jobs, true, b)
	if err != nil {
		return nil, err
	}
	out := &wire.BatchResponse{JobIDs: make([]string, len(res)), Jobs: make([]wire.EnqueueResponse, len(res)), BatchID: batchID}
	for i, x := range res {
		out.JobIDs[i] = x.JobID
		out.Jobs[i] = enqueueResponse(x)
	}
	return out, nil
}

func enqueueResponse(r engine.EnqueueResult) wire.EnqueueResponse {
	return wire.EnqueueResponse{JobID: r.JobID, Status: r.State.String(), UniqueExisting: r.Existing}
}

// enqueue proposes the jobs, as one batch with a callback when b is set,
// and returns their results and the batch's id (a replayed request's
// first).
func (s *Service) enqueue(ctx context.Context, ns string, sc tenancy.QueueScope, lim Limits, reqs []wire.EnqueueRequest, batch bool, b *engine.BatchRecord) ([]engine.EnqueueResult, string, error) {
	type out struct {
		res     []engine.EnqueueResult
		batchID string
	}
	o, err := withSchemaRetry(ctx, func() (out, error) {
		res, id, err := s.enqueueOnce(ctx, ns, sc, lim, reqs, batch, b)
		return out{res, id}, err
	})
	if isSchemaRefusal(err) {
		if res, id, ok := s.replayInstead(ctx, ns); ok {
			return res, id, nil
		}
	}
	return o.res, o.batchID, err
}

// enqueueOnce checks the request, its payloads against their queues'
// schemas included, and proposes it.
func (s *Service) enqueueOnce(ctx context.Context, ns string, sc tenancy.QueueScope, lim Limits, reqs []wire.EnqueueRequest, batch bool, b *engine.BatchRecord) ([]engine.EnqueueResult, string, error) {
	c, traced, err := s.enqueueCmd(ns, sc, lim, reqs, batch, b)
	if err != nil {
		return nil, "", err
	}
	if err := s.meter(ctx); err != nil {
		return nil, "", err
	}
	var echo []byte
	if b != nil {
		echo = []byte(b.ID)
	}
	res, batchID, err := propose(ctx, s, ns, engine.EnqueueFor(c, traced), c, echo)
	return res, string(batchID), err
}

// enqueueCmd checks the request and makes the command that inserts its
// jobs; traced says whether one of them carries a trace.
func (s *Service) enqueueCmd(ns string, sc tenancy.QueueScope, lim Limits, reqs []wire.EnqueueRequest, batch bool, b *engine.BatchRecord) (*engine.EnqueueCmd, bool, error) {
	if err := namespaceOK(ns); err != nil {
		return nil, false, err
	}
	if len(reqs) == 0 {
		return nil, false, apierr.Field("jobs", "jobs must hold at least one job")
	}
	if len(reqs) > wire.MaxBatchJobs {
		return nil, false, apierr.Field("jobs", "a batch holds at most %d jobs; got %d", wire.MaxBatchJobs, len(reqs))
	}
	c := &engine.EnqueueCmd{NS: ns, Jobs: make([][]byte, len(reqs)), Defaulted: make([]uint8, len(reqs)), Batch: b,
		MaxPending: lim.MaxPendingJobs}
	now := s.cfg.Clock.Now()
	traced := false
	z, err := s.sealerOf(ns)
	if err != nil {
		return nil, false, err
	}
	checks := s.schemaChecks(ns)
	for i := range reqs {
		// Checked without its place in the batch, so a valid batch builds
		// no field names; a refused job is checked again with it, for the
		// error to name its field ("jobs[3].payload").
		// A queue the job before named passed its check there.
		j, err := s.checkedJob(ns, sc, lim, checks, &reqs[i], "", i > 0 && reqs[i].Queue == reqs[i-1].Queue, now)
		if err != nil {
			if batch {
				if _, named := s.checkedJob(ns, sc, lim, checks, &reqs[i], fmt.Sprintf("jobs[%d].", i), false, now); named != nil {
					err = named
				}
			}
			return nil, false, err
		}
		if b != nil {
			j.BatchID = b.ID
		}
		if err := z.sealJob(j); err != nil {
			return nil, false, err
		}
		c.Deps = c.Deps || len(j.DependsOn) > 0
		traced = traced || j.Trace != nil || chainTraced(reqs[i].Chain)
		c.Jobs[i] = j.Encode()
		c.Defaulted[i] = defaultedFields(&reqs[i])
	}
	if b != nil {
		v, err := checks.check(b.CallbackQueue, "batch.callback_payload", b.CallbackPayload)
		if err != nil {
			return nil, false, err
		}
		b.CallbackSchema = v
		// Sealed after its check, into the command's copy: a retry after a
		// schema change checks b's plain payload again.
		sealed := *b
		sealed.CallbackPayload = z.seal(fieldPayload, b.ID, b.CallbackPayload)
		c.Batch = &sealed
	}
	c.Checked = checks.list
	return c, traced, nil
}

// checkedJob validates one job of an enqueue into its record; prefix
// prefixes field names in errors; queueChecked skips the check of a queue
// name another job of the request passed.
func (s *Service) checkedJob(ns string, sc tenancy.QueueScope, lim Limits, checks *schemaChecks, r *wire.EnqueueRequest, prefix string, queueChecked bool, now time.Time) (*job.Job, error) {
	j, err := toJob(lim, r, prefix, queueChecked, s.NewID("job_"), now)
	if err != nil {
		return nil, err
	}
	if err := s.flowFields(lim, prefix, r, j); err != nil {
		return nil, err
	}
	if err := s.enqueueInScope(ns, prefix, r, sc); err != nil {
		return nil, err
	}
	if err := checkJobSchemas(checks, prefix, r, j); err != nil {
		return nil, err
	}
	return j, nil
}

// defaultedFields returns the engine.Def* bits of the fields r leaves out,
// which take the queue's defaults when the command applies.
func defaultedFields(r *wire.EnqueueRequest) uint8 {
	var m uint8
	if r.MaxRetries == nil {
		m |= engine.DefMaxRetries
	}
	if r.RetryBackoff == "" {
		m |= engine.DefBackoff
	}
	if isAbsent(r.RetryBaseDelay) {
		m |= engine.DefBaseDelay
	}
	if isAbsent(r.RetryMaxDelay) {
		m |= engine.DefMaxDelay
	}
	if isAbsent(r.ExpireAfter) {
		m |= engine.DefExpireAfter
	}
	return m
}

func isAbsent(raw json.RawMessage) bool {
	s := string(raw)
	return s == "" || s == "null"
}

// flowFields validates a request's chain and depends_on and sets them on
// j; field prefixes field names in errors.
func (s *Service) flowFields(lim Limits, field string, r *wire.EnqueueRequest, j *job.Job) error {
	if r.Chain != nil {
		raw, err := validateChain(lim, r.Chain, field+"chain.", r.Queue)
		if err != nil {
			return err
		}
		j.ChainID, j.Chain = s.NewID("chain_"), raw
		j.Flow |= job.FlowChainIndexed
	}
	return dependencies(r, field, j)
}

// validateChain checks a chain and returns the JSON the job stores. The
// first step is the job itself, so it takes the request's queue.
func validateChain(lim Limits, c *wire.ChainSpec, field, queue string) ([]byte, error) {
	if len(c.Steps) == 0 || len(c.Steps) > wire.MaxChainSteps {
		return nil, apierr.Field(field+"steps", "a chain has 1 to %d steps; got %d", wire.MaxChainSteps, len(c.Steps))
	}
	first := &c.Steps[0]
	if first.Queue != "" && first.Queue != queue {
		return nil, apierr.Field(field+"steps[0].queue", "the first step is the job itself: its queue is %q", queue)
	}
	if len(first.Payload) > 0 {
		return nil, apierr.Field(field+"steps[0].payload", "the first step's payload is the request's payload")
	}
	if first.HasOptions() || first.TraceParent != "" || first.TraceState != "" {
		return nil, apierr.Field(field+"steps[0]", "the first step is the job itself: set its options on the request")
	}
	first.Queue = queue
	for i := range c.Steps {
		if err := validateStep(lim, &c.Steps[i], fmt.Sprintf("%ssteps[%d].", field, i)); err != nil {
			return nil, err
		}
	}
	for _, h := range []struct {
		step  *wire.StepSpec
		field string
	}{{c.OnFailure, "on_failure."}, {c.OnExit, "on_exit."}} {
		if h.step != nil {
			if err := validateStep(lim, h.step, field+h.field); err != nil {
				return nil, err
			}
		}
	}
	raw, err := json.Marshal(c)
	if err != nil {
		return nil, apierr.Field(field+"steps", "chain: %v", err)
	}
	if err := lim.size(field+"steps", "the chain definition", len(raw), maxChainBytes); err != nil {
		return nil, err
	}
	return raw, nil
}

// validateStep checks a step's queue, payload and job options, as an
// enqueue of them would be checked.
func validateStep(lim Limits, s *wire.StepSpec, field string) error {
	if s.Queue == "" {
		return apierr.Field(field+"queue", "queue is required")
	}
	if err := tenancy.ValidateQueue(s.Queue); err != nil {
		return apierr.Field(field+"queue", "%v", err)
	}
	p, err := lim.checkJSON(field+"payload", s.Payload, wire.MaxPayloadBytes)
	if err != nil {
		return err
	}
	s.Payload = p
	if _, err := traceOf(field, s.TraceParent, s.TraceState); err != nil {
		return err
	}
	if !s.HasOptions() {
		return nil
	}
	r := &wire.EnqueueRequest{Queue: s.Queue, Priority: s.Priority, MaxRetries: s.MaxRetries, RetryBackoff: s.RetryBackoff,
		RetryBaseDelay: s.RetryBaseDelay, RetryMaxDelay: s.RetryMaxDelay, ExpireAfter: s.ExpireAfter,
		LeaseDuration: s.LeaseDuration, Tags: s.Tags}
	return jobOptions(lim, r, field, new(job.Job))
}

func dependencies(r *wire.EnqueueRequest, field string, j *job.Job) error {
	switch r.OnDependencyFailure {
	case "", wire.OnDependencyFailureCancel:
	case wire.OnDependencyFailureRun:
		j.Flow |= job.FlowRunOnDepFail
	default:
		return apierr.Field(field+"on_dependency_failure", "on_dependency_failure must be cancel or run")
	}
	if len(r.DependsOn) == 0 {
		if r.OnDependencyFailure != "" {
			return apierr.Field(field+"on_dependency_failure", "on_dependency_failure needs depends_on")
		}
		return nil
	}
	if len(r.DependsOn) > wire.MaxDependsOn {
		return apierr.Field(field+"depends_on", "depends_on names at most %d jobs; got %d", wire.MaxDependsOn, len(r.DependsOn))
	}
	seen := make(map[string]bool, len(r.DependsOn))
	for _, id := range r.DependsOn {
		if jobIDOK(id) != nil {
			return apierr.Field(field+"depends_on", "depends_on: %q is not a job id", id)
		}
		if !seen[id] {
			seen[id] = true
			j.DependsOn = append(j.DependsOn, id)
		}
	}
	return nil
}

// batchRecord validates a batch spec into the record its enqueue opens.
func batchRecord(lim Limits, b *wire.BatchSpec, id string) (*engine.BatchRecord, error) {
	if b.CallbackQueue == "" {
		return nil, apierr.Field("batch.callback_queue", "callback_queue is required")
	}
	if err := validateStep(lim, &wire.StepSpec{Queue: b.CallbackQueue}, "batch.callback_"); err != nil {
		return nil, err
	}
	p, err := lim.checkJSON("batch.callback_payload", b.CallbackPayload, wire.MaxPayloadBytes)
	if err != nil {
		return nil, err
	}
	if _, err := traceOf("batch.", b.TraceParent, b.TraceState); err != nil {
		return nil, err
	}
	return &engine.BatchRecord{ID: id, CallbackQueue: b.CallbackQueue, CallbackPayload: p, Prunable: true,
		TraceParent: b.TraceParent, TraceState: b.TraceState}, nil
}

// GetBatch reads a batch from local state. Under a limited scope, a batch
// with a job or a callback outside it is not found.
func (s *Service) GetBatch(ns string, sc tenancy.QueueScope, id string) (*wire.Batch, error) {
	if err := namespaceOK(ns); err != nil {
		return nil, err
	}
	if !validBatchID(id) {
		return nil, apierr.New(apierr.NotFound, "batch %q not found", id)
	}
	b, err := engine.ReadBatch(s.node.DB(), ns, id)
	if err != nil {
		return nil, err
	}
	if !s.batchInScope(ns, b, sc) {
		return nil, apierr.New(apierr.NotFound, "batch %s not found", id)
	}
	return s.batchWithCallback(s.node.DB(), ns, b), nil
}

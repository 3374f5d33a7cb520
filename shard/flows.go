package shard

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"

	"github.com/oklog/ulid/v2"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/shard/job"
	"github.com/jobbie/jobbie/tenancy"
)

// Batches, chains and dependencies: jobs that wait for or follow other
// jobs. Everything happens inside the applies of the existing commands:
// enqueue records a batch, the reverse edges of dependencies and held
// jobs; flowObserver, told of every job that reaches a terminal state,
// counts batch members (batches.go), advances chains (chains.go) and
// releases or cancels dependents (deps.go). A job that uses none of them
// is passed over on its record's fields alone (job.Job.InFlow), so fetch
// and ack read nothing more for it.

// Limits on flows.
const (
	MaxChainSteps = 100
	MaxDependsOn  = 100
	maxChainBytes = MaxPayloadBytes // a chain definition, payloads included
)

// Values of on_dependency_failure.
const (
	depFailCancel = "cancel" // the default
	depFailRun    = "run"
)

// StepSpec is one step of a chain, or its on_failure or on_exit handler.
type StepSpec struct {
	Queue   string          `json:"queue"`
	Payload json.RawMessage `json:"payload,omitempty"`
}

// ChainSpec is the "chain" of an enqueue. The request's own queue and
// payload are the first step's; steps[0] names that queue (or leaves it
// empty) and has no payload of its own.
type ChainSpec struct {
	Steps     []StepSpec `json:"steps"`
	OnFailure *StepSpec  `json:"on_failure,omitempty"`
	OnExit    *StepSpec  `json:"on_exit,omitempty"`
}

// flowFields validates a request's chain and depends_on and sets them on
// j; field prefixes field names in errors.
func (e *Engine) flowFields(field string, r *EnqueueRequest, j *job.Job) error {
	if r.Chain != nil {
		raw, err := r.Chain.validate(field+"chain.", r.Queue)
		if err != nil {
			return err
		}
		j.ChainID, j.Chain = e.newID("chain_"), raw
	}
	return r.dependencies(field, j)
}

func (c *ChainSpec) validate(field, queue string) ([]byte, error) {
	if len(c.Steps) == 0 || len(c.Steps) > MaxChainSteps {
		return nil, apierr.Field(field+"steps", "a chain has 1 to %d steps; got %d", MaxChainSteps, len(c.Steps))
	}
	first := &c.Steps[0]
	if first.Queue != "" && first.Queue != queue {
		return nil, apierr.Field(field+"steps[0].queue", "the first step is the job itself: its queue is %q", queue)
	}
	if len(first.Payload) > 0 {
		return nil, apierr.Field(field+"steps[0].payload", "the first step's payload is the request's payload")
	}
	first.Queue = queue
	for i := range c.Steps {
		if err := c.Steps[i].validate(fmt.Sprintf("%ssteps[%d].", field, i)); err != nil {
			return nil, err
		}
	}
	if c.OnFailure != nil {
		if err := c.OnFailure.validate(field + "on_failure."); err != nil {
			return nil, err
		}
	}
	if c.OnExit != nil {
		if err := c.OnExit.validate(field + "on_exit."); err != nil {
			return nil, err
		}
	}
	raw, err := json.Marshal(c)
	if err != nil {
		return nil, apierr.Field(field+"steps", "chain: %v", err)
	}
	if len(raw) > maxChainBytes {
		return nil, &apierr.Error{Code: apierr.TooLarge, Field: field + "steps", Message: fmt.Sprintf("a chain definition is at most %d bytes", maxChainBytes)}
	}
	return raw, nil
}

func (s *StepSpec) validate(field string) error {
	if s.Queue == "" {
		return apierr.Field(field+"queue", "queue is required")
	}
	if err := tenancy.ValidateQueue(s.Queue); err != nil {
		return apierr.Field(field+"queue", "%v", err)
	}
	p, err := checkJSON(field+"payload", s.Payload, MaxPayloadBytes)
	s.Payload = p
	return err
}

func (r *EnqueueRequest) dependencies(field string, j *job.Job) error {
	switch r.OnDependencyFailure {
	case "", depFailCancel:
	case depFailRun:
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
	if len(r.DependsOn) > MaxDependsOn {
		return apierr.Field(field+"depends_on", "depends_on names at most %d jobs; got %d", MaxDependsOn, len(r.DependsOn))
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

// flowObserver is the moveObserver of batches, chains and dependencies.
func (e *Engine) flowObserver(tx *replica.Tx, ns string, j *job.Job, from job.State) {
	if j.CancelReason != "" && j.State == job.Pending {
		j.CancelReason = "" // retried by hand
	}
	if !j.InFlow() || !j.State.Terminal() {
		return
	}
	if j.BatchID != "" && !j.Flow.Has(job.FlowBatchCounted) {
		e.countBatchMember(tx, ns, j)
	}
	if j.ChainID != "" {
		e.advanceChain(tx, ns, j)
	}
	if j.Flow.Has(job.FlowHasDependents) {
		e.settleDependents(tx, ns, j)
	}
}

// derivedID makes the id of a job created inside an apply (a callback, a
// chain's next step): a ULID of the entry's time whose entropy hashes the
// log index and what the job is for, so every replica makes the same id.
func derivedID(tx *replica.Tx, prefix string, parts ...string) string {
	h := sha256.New()
	h.Write(binary.BigEndian.AppendUint64(nil, tx.Index))
	for _, p := range parts {
		h.Write([]byte{0})
		h.Write([]byte(p))
	}
	var u ulid.ULID
	must(u.SetTime(ulid.Timestamp(tx.Now)))
	must(u.SetEntropy(h.Sum(nil)[:10]))
	return prefix + u.String()
}

// spawnJob enqueues a job from inside an apply, with the queue's defaults,
// and wakes the queue's long-polls after commit.
func (e *Engine) spawnJob(tx *replica.Tx, ns, id, queue string, payload []byte) *job.Job {
	j := &job.Job{ID: id, Queue: queue, Payload: payload, Priority: job.Normal, State: job.Pending,
		MaxRetries: job.DefaultMaxRetries, Backoff: job.DefaultBackoff,
		BaseDelay: int64(job.DefaultBaseDelay), MaxDelay: int64(job.DefaultMaxDelay), CreatedAt: tx.Now.UnixNano()}
	e.applyJobDefaults(tx, ns, j, defMaxRetries|defBackoff|defBaseDelay|defMaxDelay)
	return e.spawn(tx, ns, j)
}

func (e *Engine) spawn(tx *replica.Tx, ns string, j *job.Job) *job.Job {
	e.insertJob(tx, ns, j)
	e.wake(tx, ns, j.Queue)
	return j
}

// orNull is raw, or JSON null when empty.
func orNull(raw []byte) json.RawMessage {
	if len(raw) == 0 {
		return json.RawMessage("null")
	}
	return raw
}

// mustJSON marshals a value built from valid JSON parts.
func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	must(err)
	return b
}

// flowView adds a job's batch, chain and dependency fields to its detail.
func flowView(d *JobDetail, j *job.Job) {
	if j.BatchID != "" {
		d.BatchID = &j.BatchID
	}
	if j.ChainID != "" {
		d.ChainID, d.ChainStep = &j.ChainID, &j.ChainStep
	}
	d.DependsOn = j.DependsOn
	if j.CancelReason != "" {
		d.CancelReason = &j.CancelReason
	}
}

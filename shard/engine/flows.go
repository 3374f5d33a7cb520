package engine

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"

	"github.com/oklog/ulid/v2"

	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/shard/job"
	"github.com/jobbie/jobbie/shard/keys"
	"github.com/jobbie/jobbie/wire"
)

// Batches, chains and dependencies: jobs that wait for or follow other
// jobs. Everything happens inside the applies of the existing commands:
// enqueue records a batch, the reverse edges of dependencies and held
// jobs; flowObserver, told of every job that reaches a terminal state,
// counts batch members (batches.go), advances chains (chains.go) and
// releases or cancels dependents (deps.go). A job that uses none of them
// is passed over on its record's fields alone (job.Job.InFlow), so fetch
// and ack read nothing more for it.

// flowObserver reacts for batches, chains and dependencies (see observe).
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

// settleRemoved settles the flows of a job about to be deleted. An
// unfinished job will now never finish, so it counts as failed: in its
// batch (which may then fire its callback) and for the held jobs that
// depend on it (cancelled, or released under on_dependency_failure
// "run"). A chain whose unfinished step is deleted stops there, and
// ends cancelled once the event log is detailed. The
// reverse edges a held job left on its dependencies are deleted with it.
func (e *Engine) settleRemoved(tx *replica.Tx, ns string, j *job.Job) {
	if j.State == job.Held {
		for _, id := range j.DependsOn {
			must(tx.Delete(keys.Dependent(ns, id, j.ID), nil))
		}
	}
	if !j.InFlow() || j.State.Terminal() {
		return
	}
	if j.BatchID != "" && !j.Flow.Has(job.FlowBatchCounted) {
		e.countBatchMember(tx, ns, j)
	}
	if j.ChainID != "" && e.detailed(tx) {
		e.chainEnded(tx, ns, j, ChainCancelled)
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

// spawnJob enqueues a job from inside an apply, with the options of its
// chain step when it is one (opts, else nil) and the queue's defaults for
// the rest, and wakes the queue's long-polls after commit. It continues
// trace (the job or batch it comes from; nil for none) unless its step
// names a trace context of its own. Jobs of logs from before traces have
// none, so they spawn as they did.
func (e *Engine) spawnJob(tx *replica.Tx, ns, id, queue string, payload []byte, opts *wire.StepSpec, trace *job.Trace, schema uint32) *job.Job {
	now := tx.Now.UnixNano()
	j := &job.Job{ID: id, Queue: queue, Payload: payload, Priority: job.Normal, State: job.Initial(0, now, false),
		MaxRetries: job.DefaultMaxRetries, Backoff: job.DefaultBackoff,
		BaseDelay: int64(job.DefaultBaseDelay), MaxDelay: int64(job.DefaultMaxDelay), CreatedAt: now, Trace: trace}
	if schema != 0 {
		j.Schema = &job.Schema{Version: schema}
	}
	if opts != nil && opts.TraceParent != "" {
		j.SetTrace(opts.TraceParent, opts.TraceState)
	}
	e.applyJobDefaults(tx, ns, j, stepOptions(j, opts, now))
	e.insertJob(tx, ns, j)
	e.wake(tx, ns, j.Queue, 1)
	return j
}

// stepOptions gives a job spawned for a chain step the options its step
// names, which the enqueue that stored the chain validated, and returns
// the Def* bits of those it leaves to the queue's defaults.
func stepOptions(j *job.Job, s *wire.StepSpec, now int64) uint8 {
	mask := DefMaxRetries | DefBackoff | DefBaseDelay | DefMaxDelay | DefExpireAfter
	if s == nil || !s.HasOptions() {
		return mask
	}
	if p, err := job.ParsePriority(s.Priority); err == nil {
		j.Priority = p
	}
	if s.MaxRetries != nil {
		j.MaxRetries, mask = *s.MaxRetries, mask&^DefMaxRetries
	}
	if s.RetryBackoff != "" {
		j.Backoff, mask = s.RetryBackoff, mask&^DefBackoff
	}
	if d, ok, err := wire.ParseDuration(s.RetryBaseDelay); ok && err == nil {
		j.BaseDelay, mask = int64(d), mask&^DefBaseDelay
	}
	if d, ok, err := wire.ParseDuration(s.RetryMaxDelay); ok && err == nil {
		j.MaxDelay, mask = int64(d), mask&^DefMaxDelay
	}
	if d, ok, err := wire.ParseDuration(s.ExpireAfter); ok && err == nil && d > 0 {
		j.ExpireAfter, j.ExpireAt, mask = int64(d), now+int64(d), mask&^DefExpireAfter
	}
	if d, ok, err := wire.ParseDuration(s.LeaseDuration); ok && err == nil && d > 0 {
		j.OwnLeaseNs = int64(d)
	}
	if len(s.Tags) > 0 {
		j.Tags = s.Tags
	}
	return mask
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

package engine

import (
	"encoding/json"

	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/shard/job"
	"github.com/jobbie/jobbie/wire"
)

// A chain runs its steps one after another. Every step carries the chain's
// definition (job.Job.Chain), its id and its index, so no other state is
// kept. Each later step (and each handler) is enqueued with the job
// options its spec names (stepOptions), the rest from its queue's
// defaults. When a step completes, the next step is enqueued with the payload
//
//	{"previous_result": <the step's result or null>, "payload": <the next step's payload or null>}
//
// An ack with step_status "exit" stops the chain: on_exit, when set, is
// enqueued with
//
//	{"chain_id", "exited_step", "exited_job_id", "previous_result", "payload"}
//
// When a step dies, on_failure, when set, is enqueued with
//
//	{"chain_id", "failed_step", "failed_job_id", "error", "dead_reason", "payload"}
//
// where error is the last attempt's error. A cancelled step stops the
// chain without a handler. The last step's completion ends the chain
// (on_exit is only for an early stop). Each step moves its chain on at
// most once (job.FlowChainAdvanced) and runs on_failure at most once
// (job.FlowChainFailed): a completed step retried by hand does not enqueue
// the next step again, while a dead step retried by hand that then
// completes does move the chain on.

// advanceChain reacts to a chain step that reached a terminal state.
func (e *Engine) advanceChain(tx *replica.Tx, ns string, j *job.Job) {
	var c wire.ChainSpec
	must(json.Unmarshal(j.Chain, &c))
	switch j.State {
	case job.Completed:
		if j.Flow.Has(job.FlowChainAdvanced) {
			return
		}
		j.Flow |= job.FlowChainAdvanced
		if j.Flow.Has(job.FlowChainExit) {
			if c.OnExit != nil {
				p := wire.ChainExitPayload{ChainID: j.ChainID, ExitedStep: j.ChainStep, ExitedJobID: j.ID,
					PreviousResult: orNull(j.Result), Payload: orNull(c.OnExit.Payload)}
				e.spawnJob(tx, ns, derivedID(tx, "job_", "chain-exit", j.ID), c.OnExit.Queue, mustJSON(p), c.OnExit, j.Trace,
					stepSchema(j, len(c.Steps)+1))
			}
			e.chainEnded(tx, ns, j, ChainExited)
			return
		}
		next := j.ChainStep + 1
		if next >= len(c.Steps) {
			e.chainEnded(tx, ns, j, ChainSucceeded)
			return
		}
		p := wire.ChainNextPayload{PreviousResult: orNull(j.Result), Payload: orNull(c.Steps[next].Payload)}
		n := e.spawnJob(tx, ns, derivedID(tx, "job_", "chain-step", j.ID), c.Steps[next].Queue, mustJSON(p), &c.Steps[next], j.Trace,
			stepSchema(j, next))
		n.ChainID, n.ChainStep, n.Chain = j.ChainID, next, j.Chain
		if j.Schema != nil && len(j.Schema.Steps) > 0 { // the later steps' versions travel with the chain
			n.Schema = &job.Schema{Version: stepSchema(j, next), Steps: j.Schema.Steps}
		}
		n.Flow |= j.Flow & job.FlowChainIndexed
		addChainStep(tx, ns, n)
		e.putJob(tx, ns, n)
	case job.Dead:
		if j.Flow.Has(job.FlowChainFailed) {
			return
		}
		if c.OnFailure == nil {
			// Marked only when logged, so a state without the event
			// has the flags it always had.
			if e.chainEnded(tx, ns, j, ChainFailed) {
				j.Flow |= job.FlowChainFailed
			}
			return
		}
		j.Flow |= job.FlowChainFailed
		e.chainEnded(tx, ns, j, ChainFailed)
		p := wire.ChainFailurePayload{ChainID: j.ChainID, FailedStep: j.ChainStep, FailedJobID: j.ID,
			DeadReason: j.DeadReason, Payload: orNull(c.OnFailure.Payload)}
		if n := len(j.Errors); n > 0 {
			p.Error = j.Errors[n-1].Error
		}
		e.spawnJob(tx, ns, derivedID(tx, "job_", "chain-failure", j.ID), c.OnFailure.Queue, mustJSON(p), c.OnFailure, j.Trace,
			stepSchema(j, len(c.Steps)))
	case job.Cancelled:
		e.chainEnded(tx, ns, j, ChainCancelled)
	}
}

// chainEnded logs chain.completed for the chain of step j, ended as
// status; it reports whether the log keeps such events.
func (e *Engine) chainEnded(tx *replica.Tx, ns string, j *job.Job, status string) bool {
	e.logEvent(tx, ns, Event{Type: EvChainCompleted, Subject: j.ChainID, Queue: j.Queue, JobID: j.ID, Detail: status})
	return e.events.wide
}

// setChainExit records the step_status of a chain step's ack.
func setChainExit(j *job.Job, stepStatus string) {
	if j.ChainID == "" {
		return
	}
	if stepStatus == wire.StepExit {
		j.Flow |= job.FlowChainExit
	} else {
		j.Flow &^= job.FlowChainExit
	}
}

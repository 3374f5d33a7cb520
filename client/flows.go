package client

import (
	"context"
	"net/url"
	"time"
)

// Chain runs jobs one after another. The enqueued job is the first step:
// Steps[0] names its queue (or leaves it empty) and has no payload. When a
// step completes, the next one is enqueued with the payload
// {"previous_result": <the step's result>, "payload": <the step's Payload>}.
// A worker that acks with StepExit stops the chain and runs OnExit; a step
// that dies runs OnFailure with the error. At most 100 steps.
type Chain struct {
	Steps     []ChainStep `json:"steps"`
	OnFailure *ChainStep  `json:"on_failure,omitempty"`
	OnExit    *ChainStep  `json:"on_exit,omitempty"`
}

// ChainStep is one step of a chain, or a handler.
type ChainStep struct {
	Queue   string `json:"queue,omitempty"`
	Payload any    `json:"payload,omitempty"`
}

// Step statuses of an ack of a chain step.
const (
	StepContinue = "continue"
	StepExit     = "exit"
)

// Dependency failure policies.
const (
	OnDependencyFailureCancel = "cancel"
	OnDependencyFailureRun    = "run"
)

// AckStep completes a chain step with a step status: StepContinue moves
// the chain on, StepExit stops it (running its on_exit handler).
func (c *Client) AckStep(ctx context.Context, jobID string, result any, stepStatus string) error {
	in := struct {
		Result     any    `json:"result,omitempty"`
		WorkerID   string `json:"worker_id,omitempty"`
		StepStatus string `json:"step_status,omitempty"`
	}{result, c.workerID, stepStatus}
	_, err := c.do(ctx, "POST", "/api/v1/ack/"+url.PathEscape(jobID), in, nil)
	return err
}

// Batch is the progress of a batch enqueued with BatchOptions.
type Batch struct {
	ID            string     `json:"id"`
	Total         int        `json:"total"`
	Pending       int        `json:"pending"`
	Succeeded     int        `json:"succeeded"`
	Failed        int        `json:"failed"` // dead or cancelled members
	CallbackQueue string     `json:"callback_queue"`
	CallbackJobID string     `json:"callback_job_id"` // "" until every member finished
	CreatedAt     time.Time  `json:"created_at"`
	CompletedAt   *time.Time `json:"completed_at"`
}

// GetBatch returns a batch's progress; a batch of another namespace or
// tenant is not found.
func (c *Client) GetBatch(ctx context.Context, id string) (*Batch, error) {
	var w struct {
		Batch
		CallbackJobID *string `json:"callback_job_id"`
	}
	if _, err := c.do(ctx, "GET", "/api/v1/batches/"+url.PathEscape(id), nil, &w); err != nil {
		return nil, err
	}
	out := w.Batch
	if w.CallbackJobID != nil {
		out.CallbackJobID = *w.CallbackJobID
	}
	return &out, nil
}

func (d *JobDetail) flowFields(w *jobDetailWire) {
	if w.ChainID != nil {
		d.ChainID = *w.ChainID
	}
	if w.ChainStep != nil {
		d.ChainStep = *w.ChainStep
	}
	d.DependsOn = w.DependsOn
	if w.CancelReason != nil {
		d.CancelReason = *w.CancelReason
	}
}

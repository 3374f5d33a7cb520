package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/jobbie/jobbie/wire"
)

// PushDelivery is the body Jobbie POSTs to a push queue's handler.
type PushDelivery = wire.PushDelivery

// PushAnswer is the envelope a push handler answers with.
type PushAnswer = wire.PushAnswer

// PushHandler serves a push queue's deliveries with the same Handler a
// Worker runs for pulled jobs (docs/api/push.md, "the delivery
// contract"). For each POST it verifies the Standard Webhooks signature
// with v (401 when it fails), decodes the delivery into a JobContext,
// runs h, and answers 200 with the result (and the last Checkpoint and
// Progress), or 500 with the error's text (and backtrace, checkpoint,
// progress), so the server retries by the queue's policy. A pushed job
// has no lease to heartbeat: Checkpoint and Progress are sent in the
// answer, and the handler's context ends with ErrDeliveryAborted when
// the request does.
//
//	v, _ := client.NewWebhookVerifier(signingKey) // "whpk_…", from the namespace's signing keys
//	http.Handle("/jobs", client.PushHandler(v, handle))
func PushHandler(v *WebhookVerifier, h Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			answer(w, http.StatusMethodNotAllowed, PushAnswer{Error: "push deliveries are POSTed"})
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, wire.MaxPushDeliveryBytes))
		if err != nil {
			status := http.StatusBadRequest
			if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
				status = http.StatusRequestEntityTooLarge
			}
			answer(w, status, PushAnswer{Error: "reading the delivery: " + err.Error()})
			return
		}
		if err := v.Verify(r.Header, body); err != nil {
			answer(w, http.StatusUnauthorized, PushAnswer{Error: err.Error()})
			return
		}
		var d PushDelivery
		if err := json.Unmarshal(body, &d); err != nil || d.JobID == "" || d.Queue == "" {
			answer(w, http.StatusBadRequest, PushAnswer{Error: "not a push delivery: want a JSON object with job_id and queue"})
			return
		}
		runPushed(w, r.Context(), d, h)
	})
}

// runPushed runs h for one delivery and writes its answer.
func runPushed(w http.ResponseWriter, reqCtx context.Context, d PushDelivery, h Handler) {
	ctx, cancel := context.WithCancelCause(context.WithoutCancel(reqCtx))
	defer cancel(nil)
	jc := &JobContext{
		ID: d.JobID, Queue: d.Queue, Payload: d.Payload, Attempt: d.Attempt, MaxRetries: d.MaxRetries,
		Tags: d.Tags, LastCheckpoint: rawOrNil(d.Checkpoint), TraceParent: d.TraceParent, TraceState: d.TraceState,
		LeaseDuration: time.Duration(d.Timeout * float64(time.Second)), base: ctx, cancel: cancel,
	}
	stopWatching := context.AfterFunc(reqCtx, func() { jc.stop(ErrDeliveryAborted) })
	defer stopWatching()

	result, err := invoke(ctx, nil, "", h, jc)
	var a PushAnswer
	if err == nil && result != nil {
		a.Result, err = json.Marshal(result)
		if err != nil {
			err = fmt.Errorf("encode result: %w", err)
		}
	}
	a.Checkpoint, a.Progress = jc.pushedState()
	if err != nil {
		a.Result, a.Error, a.Backtrace, a.NonRetryable = nil, err.Error(), backtraceOf(err), IsPermanent(err)
		answer(w, http.StatusInternalServerError, a)
		return
	}
	if a.Result == nil && a.Checkpoint == nil && a.Progress == nil {
		w.WriteHeader(http.StatusOK) // an empty body: acked with no result
		return
	}
	answer(w, http.StatusOK, a)
}

// pushedState is what a pushed job's answer carries besides its outcome.
func (j *JobContext) pushedState() (checkpoint, progress json.RawMessage) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.progress != nil {
		progress, _ = json.Marshal(j.progress)
	}
	return j.checkpoint, progress
}

func answer(w http.ResponseWriter, status int, a PushAnswer) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(a)
}

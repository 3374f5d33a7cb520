package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"runtime/debug"
	"time"

	"go.opentelemetry.io/otel/trace"
)

// Reporting an outcome is retried this often, each call bounded by
// reportTimeout, when the failure is transient.
const (
	reportAttempts = 5
	reportTimeout  = 30 * time.Second
)

// fetchLoop fetches and runs jobs one at a time until ctx is done. A
// refusal that retrying cannot fix stops the whole worker.
func (w *Worker) fetchLoop(ctx context.Context, stop context.CancelFunc, base context.Context) {
	req := FetchRequest{
		Queues: w.cfg.Queues, WorkerID: w.cfg.WorkerID, Hostname: w.cfg.Hostname,
		Timeout: w.cfg.FetchTimeout, LeaseDuration: w.cfg.LeaseDuration,
	}
	bo := backoff{p: w.c.retry}
	for ctx.Err() == nil {
		job, err := w.c.Fetch(ctx, req)
		switch {
		case err == nil && job != nil:
			bo.reset()
			w.process(base, job)
		case err == nil:
			bo.reset()
		case ctx.Err() != nil:
			return
		case errors.Is(err, ErrWorkerDraining):
			w.log.Info("jobbie worker: drained, finishing held jobs", "worker", w.cfg.WorkerID)
			stop()
			return
		case permanent(err):
			w.log.Error("jobbie worker: fetch refused, stopping", "worker", w.cfg.WorkerID, "err", err)
			w.setFatal(err)
			stop()
			return
		default:
			w.log.Warn("jobbie worker: fetch failed", "worker", w.cfg.WorkerID, "err", err)
			if !sleepCtx(ctx, bo.next(err)) {
				return
			}
		}
	}
}

// permanent reports a fetch error that retrying will not fix: a 4xx other
// than 408 and 429.
func permanent(err error) bool {
	e, ok := AsError(err)
	return ok && e.Status >= 400 && e.Status < 500 &&
		e.Status != http.StatusTooManyRequests && e.Status != http.StatusRequestTimeout
}

// process runs one job and reports its outcome.
func (w *Worker) process(base context.Context, job *Job) {
	ctx, cancel := context.WithCancelCause(base)
	defer cancel(nil)
	jc := newJobContext(w, base, cancel, job)
	if !w.track(jc) {
		jc.claim()
		w.failJob(base, jc, ErrWorkerShutdown)
		return
	}
	result, err := w.invoke(ctx, jc)
	w.finish(base, jc, result, err)
}

// track registers a running job for heartbeats; false once shutdown has
// given up on running jobs.
func (w *Worker) track(jc *JobContext) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return false
	}
	w.active[jc.ID] = jc
	if third := jc.LeaseDuration / 3; third > 0 && third < w.cfg.HeartbeatInterval {
		select {
		case w.leaseNudge <- struct{}{}:
		default:
		}
	}
	return true
}

// invoke calls the handler, turning a panic into an error with its stack.
func (w *Worker) invoke(ctx context.Context, jc *JobContext) (result any, err error) {
	return invoke(ctx, w.cfg.TracerProvider, w.c.header.Get(NamespaceHeader), w.h, jc)
}

// invoke runs h in the job's process span (worker_tracing.go); tp nil is
// the global TracerProvider, ns "" the key's default namespace.
func invoke(ctx context.Context, tp trace.TracerProvider, ns string, h Handler, jc *JobContext) (result any, err error) {
	ctx, end := startProcess(ctx, tp, ns, jc)
	defer func() {
		if r := recover(); r != nil {
			err = &panicError{value: r, stack: string(debug.Stack())}
		}
		end(causeOf(ctx, err))
	}()
	return h(ctx, jc)
}

// finish reports the outcome of a job unless shutdown already failed it or
// the server cancelled it or took it back.
func (w *Worker) finish(base context.Context, jc *JobContext, result any, err error) {
	w.mu.Lock()
	delete(w.active, jc.ID)
	claimed := jc.claim()
	if claimed {
		w.reports.Add(1)
	}
	w.mu.Unlock()
	if !claimed {
		return
	}
	defer w.reports.Done()
	switch stopped := jc.serverStopped(); {
	case errors.Is(stopped, ErrJobCancelled):
		// Failing a job whose cancel was asked settles it as cancelled at
		// once, rather than when its lease runs out.
		w.failJob(base, jc, ErrJobCancelled)
	case stopped != nil:
		w.log.Debug("jobbie worker: job stopped by the server", "job", jc.ID, "reason", stopped)
	case err != nil:
		w.failJob(base, jc, err)
	default:
		w.ackJob(base, jc, result)
	}
}

// ackJob and failJob report under the job's lease, so a job whose lease
// ran out and went to another worker is not settled for that worker.
func (w *Worker) ackJob(base context.Context, jc *JobContext, result any) {
	var raw json.RawMessage
	if result != nil {
		b, err := json.Marshal(result)
		if err != nil {
			w.failJob(base, jc, fmt.Errorf("encode result: %w", err))
			return
		}
		raw = b
	}
	usage := WithUsage(jc.takeUsage()) // the same report on every retry: a second apply is refused
	w.report(base, "ack", jc.ID, func(ctx context.Context) error {
		if raw == nil {
			return w.c.Ack(ctx, jc.ID, nil, Lease(jc.LeaseToken), usage)
		}
		return w.c.Ack(ctx, jc.ID, raw, Lease(jc.LeaseToken), usage)
	})
}

func (w *Worker) failJob(base context.Context, jc *JobContext, cause error) {
	msg, bt := cause.Error(), backtraceOf(cause)
	opts := append(failOptions(jc.LeaseToken, cause), WithUsage(jc.takeUsage()))
	w.report(base, "fail", jc.ID, func(ctx context.Context) error {
		_, err := w.c.Fail(ctx, jc.ID, msg, bt, opts...)
		return err
	})
}

// report sends an ack or fail, retrying transient failures.
func (w *Worker) report(base context.Context, what, id string, call func(context.Context) error) {
	bo := backoff{p: w.c.retry}
	for attempt := 1; ; attempt++ {
		ctx, cancel := context.WithTimeout(base, reportTimeout)
		err := call(ctx)
		cancel()
		if err == nil {
			return
		}
		_, isAPI := AsError(err)
		if attempt == reportAttempts || (isAPI && !IsRetryable(err)) {
			w.log.Warn("jobbie worker: "+what+" failed", "job", id, "err", err)
			return
		}
		time.Sleep(bo.next(err))
	}
}

// backtraceOf is the backtrace an error carries (a `Backtrace() string`
// method), or "".
func backtraceOf(err error) string {
	var b interface{ Backtrace() string }
	if errors.As(err, &b) {
		return b.Backtrace()
	}
	return ""
}

// panicError is a handler panic.
type panicError struct {
	value any
	stack string
}

func (p *panicError) Error() string     { return fmt.Sprintf("panic: %v", p.value) }
func (p *panicError) Backtrace() string { return p.stack }

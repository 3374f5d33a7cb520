package client

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// Handler runs one job. ctx is cancelled with cause ErrJobCancelled when
// the server cancels the job, ErrLeaseLost when the job is no longer
// leased to this worker, and ErrWorkerShutdown when a shutdown's grace
// period ends. A nil error acks the job with result; an error (or a
// panic) fails it with the error's message, and the server decides about
// retries. An error with a `Backtrace() string` method sends that backtrace.
type Handler func(ctx context.Context, job *JobContext) (result any, err error)

// Worker runs a Handler for the jobs of some queues: Concurrency fetch
// loops, one batched heartbeat loop, and a graceful shutdown.
type Worker struct {
	c   *Client
	cfg WorkerConfig
	h   Handler
	log *slog.Logger

	started  atomic.Bool
	stopping atomic.Bool
	fatalMu  sync.Mutex
	fatal    error

	mu         sync.Mutex
	active     map[string]*JobContext
	closed     bool           // shutdown gave up on running jobs
	reports    sync.WaitGroup // acks and fails in flight
	leaseNudge chan struct{}  // a job with a lease shorter than 3 heartbeat intervals started
	stream     *streamWorker  // while working over the stream (worker_stream.go), else nil
	using      atomic.Int32   // the Transport it works over now
}

// NewWorker returns a worker that fetches with c. cfg is completed with
// WithDefaults; Run validates it.
func NewWorker(c *Client, cfg WorkerConfig, h Handler) *Worker {
	cfg = cfg.WithDefaults()
	w := &Worker{c: c.ForWorker(cfg.WorkerID), cfg: cfg, h: h, log: cfg.Logger, active: map[string]*JobContext{},
		leaseNudge: make(chan struct{}, 1)}
	w.using.Store(int32(cfg.Transport))
	return w
}

// ID is the worker id sent with every fetch.
func (w *Worker) ID() string { return w.cfg.WorkerID }

// Run works until ctx is cancelled, then shuts down gracefully: it stops
// fetching, waits up to ShutdownGrace for running jobs, fails those still
// running with "worker_shutdown", and returns nil. It returns early with
// an error if the config is invalid or the server refuses the worker
// (bad key, forbidden, unknown namespace or queue). Run may be called once.
func (w *Worker) Run(ctx context.Context) error {
	if err := w.cfg.Validate(); err != nil {
		return err
	}
	if w.h == nil {
		return errors.New("client: worker has no handler")
	}
	if !w.started.CompareAndSwap(false, true) {
		return errors.New("client: Worker.Run called twice")
	}
	switch w.cfg.Transport {
	case TransportHTTP:
		w.use(TransportHTTP, "as configured")
		_, err := w.runHTTP(ctx, nil)
		return err
	case TransportStream:
		return w.runOnStream(ctx)
	}
	return w.runAuto(ctx)
}

// runHTTP is Run over HTTP. With probe, it ends early, switched true,
// once probe says the stream may be had: it stops fetching and returns
// when its running jobs are done (unless ctx ends first: then it shuts
// down as Run does).
func (w *Worker) runHTTP(ctx context.Context, probe func(context.Context) bool) (switched bool, err error) {
	base := context.WithoutCancel(ctx)
	fetchCtx, stopFetching := context.WithCancel(ctx)
	defer stopFetching()
	phaseCtx, endPhase := context.WithCancel(fetchCtx)
	defer endPhase()

	hbCtx, stopHeartbeats := context.WithCancel(base)
	hbDone := make(chan struct{})
	go func() {
		defer close(hbDone)
		w.heartbeatLoop(hbCtx)
	}()

	var loops sync.WaitGroup
	for range w.cfg.Concurrency {
		loops.Go(func() { w.fetchLoop(phaseCtx, stopFetching, base) })
	}
	loopsDone := make(chan struct{})
	go func() {
		loops.Wait()
		close(loopsDone)
	}()
	var probed sync.WaitGroup
	if probe != nil {
		probed.Go(func() {
			if probe(phaseCtx) {
				endPhase()
			}
		})
	}

	<-phaseCtx.Done()
	if fetchCtx.Err() == nil {
		select { // switching: the loops finish their jobs first
		case <-loopsDone:
		case <-fetchCtx.Done():
		}
	}
	if fetchCtx.Err() != nil {
		w.stopping.Store(true)
		w.awaitJobs(base, loopsDone)
	}
	stopHeartbeats()
	<-hbDone
	probed.Wait()
	w.reports.Wait()
	return !w.stopping.Load(), w.fatalErr()
}

// awaitJobs waits for the fetch loops to finish their jobs, at most
// ShutdownGrace, then abandons the jobs still running.
func (w *Worker) awaitJobs(base context.Context, loopsDone <-chan struct{}) {
	grace := time.NewTimer(w.cfg.ShutdownGrace)
	defer grace.Stop()
	select {
	case <-loopsDone:
	case <-grace.C:
		w.abandon(base)
	}
}

// abandon fails every job still running with "worker_shutdown" and
// cancels its context. Handlers that ignore their context are left to
// return on their own; their outcome is then ignored.
func (w *Worker) abandon(base context.Context) {
	w.mu.Lock()
	w.closed = true
	var left []*JobContext
	for id, jc := range w.active {
		delete(w.active, id)
		if jc.claim() {
			left = append(left, jc)
		}
	}
	w.reports.Add(len(left))
	w.mu.Unlock()
	for _, jc := range left {
		jc.cancel(ErrWorkerShutdown)
		go func() {
			defer w.reports.Done()
			w.failAbandoned(base, jc)
		}()
	}
}

func (w *Worker) setFatal(err error) {
	w.fatalMu.Lock()
	defer w.fatalMu.Unlock()
	if w.fatal == nil {
		w.fatal = err
	}
}

func (w *Worker) fatalErr() error {
	w.fatalMu.Lock()
	defer w.fatalMu.Unlock()
	return w.fatal
}

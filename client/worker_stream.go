package client

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/structpb"

	jobbiev1 "github.com/jobbie/jobbie/proto/gen/jobbie/v1"
	"github.com/jobbie/jobbie/proto/gen/jobbie/v1/jobbiev1connect"
	"github.com/jobbie/jobbie/wire"
)

// reportWait bounds the wait for the answer to a report sent on the
// stream, across reconnects.
const reportWait = time.Minute

// streamWorker is a Worker's side of the stream.
type streamWorker struct {
	w       *Worker
	api     jobbiev1connect.WorkerServiceClient
	out     *outbox
	held    atomic.Int64 // jobs received, running and not yet settled
	drained atomic.Bool  // the current stream was told to drain
	closing atomic.Bool  // shutdown: close the stream once nothing is held or in flight
	changed chan struct{}
	closed  chan struct{} // shutdown: open no new stream
	fatal   chan struct{}
	// workerDrain: the server drained this worker (Drain.worker); out
	// closes once its stream ended, and Run returns as over HTTP.
	workerDrain atomic.Bool
	drainedOut  chan struct{}
	url         string
	auto        bool          // TransportAuto: fall back to HTTP when the stream cannot be reached
	fallback    chan struct{} // closed when it falls back

	fatalOnce sync.Once
	base      context.Context

	mu      sync.Mutex
	stopped bool           // Run's context ended: start no more jobs
	jobs    sync.WaitGroup // handlers running
}

// runStream is Run over the stream at url. With auto, it returns
// fellBack true (and nothing else done) when the stream cannot be
// reached while the worker holds no job of it: HTTP's turn.
func (w *Worker) runStream(ctx context.Context, url string, auto bool) (fellBack bool, err error) {
	base := context.WithoutCancel(ctx)
	hc := streamHTTPClient(w.c, url)
	defer hc.CloseIdleConnections()
	sw := &streamWorker{w: w, out: newOutbox(w.c.retry), base: base, url: url, auto: auto, fallback: make(chan struct{}),
		api: jobbiev1connect.NewWorkerServiceClient(hc, strings.TrimRight(url, "/"), connect.WithGRPC(),
			connect.WithCodec(streamCodec{})),
		changed: make(chan struct{}, 1), closed: make(chan struct{}), fatal: make(chan struct{}), drainedOut: make(chan struct{})}
	w.stream = sw
	sessions, endSessions := context.WithCancel(base)
	defer endSessions()
	connDone := make(chan struct{})
	go func() {
		defer close(connDone)
		sw.connect(sessions)
	}()
	hbCtx, stopHeartbeats := context.WithCancel(base)
	hbDone := make(chan struct{})
	go func() {
		defer close(hbDone)
		sw.heartbeatLoop(hbCtx)
	}()

	select {
	case <-ctx.Done():
	case <-sw.fatal:
	case <-sw.drainedOut:
	case <-sw.fallback:
		// Nothing runs and nothing awaits an answer: only the heartbeats
		// to stop.
		stopHeartbeats()
		<-hbDone
		<-connDone
		w.stream = nil
		return true, nil
	}
	sw.mu.Lock()
	sw.stopped = true
	w.stopping.Store(true)
	sw.mu.Unlock()
	sw.nudge()
	sw.awaitJobs(base)
	w.reports.Wait()
	stopHeartbeats()
	<-hbDone
	// Close the stream once its last answers came (the server releases
	// what the worker was sent and did not start), else give up on it.
	sw.closing.Store(true)
	close(sw.closed)
	sw.nudge()
	t := time.NewTimer(reportWait)
	defer t.Stop()
	select {
	case <-connDone:
	case <-t.C:
		endSessions()
		<-connDone
	}
	return false, w.fatalErr()
}

// awaitJobs waits for the running handlers, at most ShutdownGrace, then
// abandons the jobs still running.
func (sw *streamWorker) awaitJobs(base context.Context) {
	done := make(chan struct{})
	go func() {
		sw.jobs.Wait()
		close(done)
	}()
	grace := time.NewTimer(sw.w.cfg.ShutdownGrace)
	defer grace.Stop()
	select {
	case <-done:
	case <-grace.C:
		sw.w.abandon(base)
	}
}

func (sw *streamWorker) nudge() {
	select {
	case sw.changed <- struct{}{}:
	default:
	}
}

// room is the credit a new stream may grant: one per job not running.
func (sw *streamWorker) room() int64 { return max(int64(sw.w.cfg.Concurrency)-sw.held.Load(), 0) }

// noCredit: grant none, the worker is stopping or its stream draining.
func (sw *streamWorker) noCredit() bool { return sw.w.stopping.Load() || sw.drained.Load() }

func (sw *streamWorker) shuttingDown() bool { return sw.closing.Load() }

// start runs a job the stream handed over. One that arrives after Run's
// context ended is not started: the server releases it when the stream
// closes.
func (sw *streamWorker) start(job *Job) {
	sw.mu.Lock()
	if sw.stopped {
		sw.mu.Unlock()
		return
	}
	sw.held.Add(1)
	sw.jobs.Add(1)
	sw.mu.Unlock()
	go func() {
		defer sw.jobs.Done()
		sw.run(job)
	}()
}

// run runs one job and reports its outcome.
func (sw *streamWorker) run(job *Job) {
	w := sw.w
	ctx, cancel := context.WithCancelCause(sw.base)
	defer cancel(nil)
	jc := newJobContext(w, sw.base, cancel, job)
	if !w.track(jc) {
		jc.claim()
		sw.fail(jc, ErrWorkerShutdown)
		return
	}
	result, err := w.invoke(ctx, jc)
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
	case stopped == ErrJobCancelled:
		sw.fail(jc, ErrJobCancelled) // settles it as cancelled at once
	case stopped != nil:
		sw.held.Add(-1) // the lease went elsewhere: nothing to report
		sw.out.grant(sw.credit())
		sw.nudge()
	case err != nil:
		sw.fail(jc, err)
	default:
		sw.ack(jc, result)
	}
}

// credit is the credit a settled job gives back: 1, none while stopping.
func (sw *streamWorker) credit() int32 {
	if sw.noCredit() {
		return 0
	}
	return 1
}

func (sw *streamWorker) ack(jc *JobContext, result any) {
	a := &jobbiev1.Ack{JobId: jc.ID, LeaseToken: jc.LeaseToken, Usage: usageValue(jc)}
	if result != nil {
		v, err := valueOf(result)
		if err != nil {
			sw.fail(jc, err)
			return
		}
		a.Result = v
	}
	sw.report("ack", jc, &outItem{ack: a})
}

func (sw *streamWorker) fail(jc *JobContext, cause error) {
	sw.report("fail", jc, &outItem{fail: &jobbiev1.Fail{JobId: jc.ID, LeaseToken: jc.LeaseToken, Error: cause.Error(), Backtrace: backtraceOf(cause),
		Usage: usageValue(jc), NonRetryable: IsPermanent(cause)}})
}

// report sends it with the credit the job gives back, and waits for its
// answer (sent again on the next stream if this one breaks first).
func (sw *streamWorker) report(what string, jc *JobContext, it *outItem) {
	sw.out.put(it, sw.credit())
	sw.held.Add(-1)
	sw.nudge()
	t := time.NewTimer(reportWait)
	defer t.Stop()
	select {
	case r := <-it.done:
		if r.GetErrorCode() != "" {
			sw.w.log.Warn("jobbie worker: "+what+" refused", "job", jc.ID, "code", r.GetErrorCode(), "err", r.GetErrorMessage())
		}
	case <-t.C:
		sw.out.forget(it)
		sw.w.log.Warn("jobbie worker: "+what+" unanswered", "job", jc.ID, "after", reportWait)
	}
}

// failAbandoned fails a job shutdown gave up on, over the worker's
// transport.
func (w *Worker) failAbandoned(base context.Context, jc *JobContext) {
	if w.stream != nil {
		w.stream.fail(jc, ErrWorkerShutdown)
		return
	}
	w.failJob(base, jc, ErrWorkerShutdown)
}

// cancelJob stops the handler of a job the server cancelled.
func (sw *streamWorker) cancelJob(id, token string) {
	sw.w.mu.Lock()
	jc := sw.w.active[id]
	sw.w.mu.Unlock()
	if jc != nil && (token == "" || token == jc.LeaseToken) {
		jc.stop(ErrJobCancelled)
	}
}

// valueOf is any JSON-encodable value as a Value.
func valueOf(x any) (*structpb.Value, error) {
	b, err := json.Marshal(x)
	if err != nil {
		return nil, err
	}
	v := new(structpb.Value)
	return v, protojson.Unmarshal(b, v)
}

// heartbeatLoop heartbeats the running jobs on the stream, as the HTTP
// worker's heartbeatLoop does over HTTP.
func (sw *streamWorker) heartbeatLoop(ctx context.Context) {
	w := sw.w
	next := time.Now().Add(w.heartbeatEvery())
	t := time.NewTimer(time.Until(next))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-w.leaseNudge:
			if due := time.Now().Add(w.heartbeatEvery()); due.Before(next) {
				next = due
				t.Reset(time.Until(next))
			}
			continue
		case <-t.C:
		}
		sw.heartbeat(ctx)
		next = time.Now().Add(w.heartbeatEvery())
		t.Reset(time.Until(next))
	}
}

// heartbeat sends one Heartbeat per running job (one frame, one call on
// the server) with its progress, and stops the jobs the answers say were
// cancelled or lost.
func (sw *streamWorker) heartbeat(ctx context.Context) {
	w := sw.w
	w.mu.Lock()
	running := make([]*JobContext, 0, len(w.active))
	for _, jc := range w.active {
		running = append(running, jc)
	}
	w.mu.Unlock()
	items := make([]*outItem, len(running))
	vers := make([]uint64, len(running))
	usage := make([]*AIUsage, len(running))
	for i, jc := range running {
		var p *Progress
		p, vers[i] = jc.pendingProgress()
		usage[i] = jc.takeUsage()
		b := &jobbiev1.Heartbeat{JobId: jc.ID, LeaseToken: jc.LeaseToken}
		if usage[i] != nil {
			b.Usage, _ = valueOf(usage[i])
		}
		if p != nil {
			b.Progress, _ = valueOf(p)
		}
		items[i] = &outItem{beat: b}
		sw.out.put(items[i], 0)
	}
	ctx, cancel := context.WithTimeout(ctx, max(w.cfg.HeartbeatInterval, minHeartbeatTimeout))
	defer cancel()
	for i, it := range items {
		select {
		case r := <-it.done:
			if r == nil || r.GetErrorCode() != "" {
				running[i].restoreUsage(usage[i]) // the next heartbeat, or the ack, sends it
				continue
			}
			running[i].progressSent(vers[i])
			switch r.GetStatus() {
			case wire.HeartbeatCancel:
				running[i].stop(ErrJobCancelled)
			case wire.HeartbeatLost:
				running[i].stop(ErrLeaseLost)
			}
		case <-ctx.Done():
			if sw.out.forget(it) {
				running[i].restoreUsage(usage[i]) // never sent
			}
		}
	}
}

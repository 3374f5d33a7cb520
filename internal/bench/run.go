package bench

import (
	"context"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"
)

// Per-call timeouts besides the fetch's long-poll.
const (
	callTimeout  = 30 * time.Second
	fetchSlack   = 10 * time.Second
	maxPause     = time.Second           // the longest Retry-After honoured
	errorPause   = 20 * time.Millisecond // pause after an error without Retry-After
	pickupWindow = 10 * time.Second      // latency mode: how long one job may take
)

// Run runs the bench described by cfg, writing progress lines and the
// final report to w. It returns the report even when ctx is cancelled
// early, and an error only if cfg is invalid or not one job completed.
func Run(ctx context.Context, cfg Config, w io.Writer) (*Report, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	r := newRunner(ctx, cfg, w)
	defer r.tr.close()
	if cfg.Push {
		p, err := r.startPush()
		if err != nil {
			return nil, err
		}
		r.push = p
	}
	rep := r.run()
	rep.WriteText(w)
	if rep.Acked == 0 {
		return rep, fmt.Errorf("bench: no job completed (errors: %s)", rep.errorList())
	}
	return rep, nil
}

// runner is one run's shared state.
type runner struct {
	cfg  Config
	out  io.Writer
	tr   transport
	t0   time.Time
	base context.Context // never cancelled by the run's end: acks finish

	stopCtx context.Context // done when the run ends
	stop    context.CancelFunc
	endOnce sync.Once
	end     snapshot

	track   *tracker
	gate    *gate
	pace    *pacer
	push    *pushSide // push mode
	body    []byte
	acks    chan string // latency mode: ids of acked jobs
	toGo    atomic.Int64
	counter counters

	statsMu sync.Mutex
	stats   []*loopStats
}

// counters are the run's running totals.
type counters struct {
	enqueued, calls, delivered, acked, empty, errors atomic.Int64
}

// snapshot is the state when the run ended; rates are computed from it so
// the drain after the end does not inflate them.
type snapshot struct {
	elapsed  time.Duration
	enqueued int64
	acked    int64
}

// loopStats are one goroutine's measurements, merged into the report.
type loopStats struct {
	enqueue, delivery, pickup, ack *histogram
	errors                         map[string]int64
}

func newRunner(ctx context.Context, cfg Config, w io.Writer) *runner {
	r := &runner{
		cfg: cfg, out: w, tr: cfg.newTransport(), base: context.WithoutCancel(ctx),
		track: newTracker(), gate: newGate(cfg.MaxOutstanding),
		body: enqueueBody(cfg.Queue, cfg.PayloadSize, cfg.Batch),
		acks: make(chan string, 1024), pace: newPacer(cfg.Rate),
	}
	if cfg.Duration > 0 {
		r.stopCtx, r.stop = context.WithTimeout(ctx, cfg.Duration)
	} else {
		r.stopCtx, r.stop = context.WithCancel(ctx)
	}
	r.toGo.Store(cfg.Jobs)
	return r
}

func (r *runner) newStats() *loopStats {
	s := &loopStats{
		enqueue: newHistogram(), delivery: newHistogram(), pickup: newHistogram(),
		ack: newHistogram(), errors: map[string]int64{},
	}
	r.statsMu.Lock()
	r.stats = append(r.stats, s)
	r.statsMu.Unlock()
	return s
}

// now is the time since the run started.
func (r *runner) now() time.Duration { return time.Since(r.t0) }

func (r *runner) run() *Report {
	r.t0 = time.Now()
	defer r.stop()
	var wg sync.WaitGroup
	host := hostname()
	for i := range r.cfg.Workers {
		st := r.newStats()
		id := fmt.Sprintf("bench-%s-%d", host, i)
		if r.cfg.Transport == TransportStream {
			wg.Go(func() { r.streamWorker(id, st) })
		} else if r.cfg.FetchBatch > 1 || r.cfg.AckBatch > 1 {
			wg.Go(func() { r.batchWorker(id, st) })
		} else {
			wg.Go(func() { r.worker(id, st) })
		}
	}
	for range r.cfg.Producers {
		st := r.newStats()
		if r.cfg.Latency {
			wg.Go(func() { r.latencyProducer(st) })
		} else {
			wg.Go(func() { r.producer(st) })
		}
	}
	if r.cfg.ProgressEvery > 0 {
		wg.Go(r.progress)
	}
	<-r.stopCtx.Done()
	r.finish()
	r.gate.close()
	wg.Wait()
	if r.push != nil {
		// Counts include what completes after the window, as a pull
		// run's acks that finish after it do.
		if n := r.push.drain(r.counter.enqueued.Load()); n >= 0 {
			r.counter.acked.Store(n)
		}
	}
	return r.report()
}

// finish marks the end of the measured window (once) and ends the run.
func (r *runner) finish() {
	r.endOnce.Do(func() {
		r.end = snapshot{elapsed: r.now(), enqueued: r.counter.enqueued.Load(), acked: r.counter.acked.Load()}
		r.stop()
		if r.push != nil {
			// A pushed job is completed when the dispatcher's ack lands,
			// after the receiver answered: the queue's counts say so.
			if n, err := r.push.completed(); err == nil {
				r.end.acked = n
			}
		}
	})
}

// claim takes k jobs from the run's budget; false when it is spent.
func (r *runner) claim(k int64) bool {
	if r.cfg.Jobs == 0 {
		return true
	}
	return r.toGo.Add(-k)+k > 0
}

// refund returns the budget of a call that enqueued nothing.
func (r *runner) refund(k int64) {
	if r.cfg.Jobs > 0 {
		r.toGo.Add(k)
	}
}

// failed counts a failed call by its error code and pauses the caller: as
// long as the server's Retry-After (capped), or briefly.
func (r *runner) failed(st *loopStats, rep reply, err error) {
	st.errors[errorCode(rep, err)]++
	r.counter.errors.Add(1)
	pause := errorPause
	if rep.retryAfter > 0 {
		pause = min(rep.retryAfter, maxPause)
	}
	t := time.NewTimer(pause)
	defer t.Stop()
	select {
	case <-t.C:
	case <-r.stopCtx.Done():
	}
}

// progress prints a line per interval until the run ends.
func (r *runner) progress() {
	t := time.NewTicker(r.cfg.ProgressEvery)
	defer t.Stop()
	var lastEnq, lastAck int64
	last := time.Duration(0)
	for {
		select {
		case <-r.stopCtx.Done():
			return
		case <-t.C:
		}
		now := r.now()
		enq, ack := r.counter.enqueued.Load(), r.counter.acked.Load()
		secs := (now - last).Seconds()
		fmt.Fprintf(r.out, "%6.1fs  enqueued %9d (%8.0f/s)  %s %9d (%8.0f/s)  outstanding %6d  errors %d\n",
			now.Seconds(), enq, float64(enq-lastEnq)/secs, r.doneWord(), ack, float64(ack-lastAck)/secs,
			max(enq-r.counter.delivered.Load(), 0), r.counter.errors.Load())
		lastEnq, lastAck, last = enq, ack, now
	}
}

// doneWord names what the progress lines count as done: acked jobs, or
// in push mode the deliveries the receiver answered.
func (r *runner) doneWord() string {
	if r.push != nil {
		return "   pushed"
	}
	return "completed"
}

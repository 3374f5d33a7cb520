package connectapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"connectrpc.com/connect"

	"github.com/jobbie/jobbie/internal/apierr"
	jobbiev1 "github.com/jobbie/jobbie/proto/gen/jobbie/v1"
	"github.com/jobbie/jobbie/wire"
)

// WorkerService.Work: one bidirectional stream per worker process. The
// stream decides nothing either: each thing it does for the worker is
// the worker route of the HTTP API for the same thing, served by Route
// with the stream's key and namespace (a fetch/batch long-poll always,
// for the credit or, with none, for the worker's cancels, work_fetch.go;
// one ack/batch for a frame's acks, one heartbeat for its heartbeats, a
// fail, an enqueue, a release). So authentication, RBAC, queue scope,
// plan limits, fair admission and metering are the route's, call by
// call. Between calls the key is judged again (WorkConfig.CheckKey) when
// the revocation list changes and at every keep-alive tick, so a revoked
// or expired key ends its stream within the revocation bound.

// WorkConfig is how the worker stream behaves.
type WorkConfig struct {
	// Stopping ends when the gateway begins to stop: every stream is sent
	// Drain and ended DrainWithin later, or when its worker closes first.
	Stopping    context.Context
	DrainWithin time.Duration
	// KeepAlive is how long a stream may send nothing before the server
	// sends a KeepAlive frame, for proxies that close idle streams.
	KeepAlive time.Duration
	// FetchWait is the wait of each fetch/batch long-poll the stream runs.
	FetchWait time.Duration
	// FetchMax caps the jobs one fetch asks for (credit permitting).
	FetchMax int
	// CheckKey judges a stream's key (its authorization metadata) again,
	// by admission's own check: nil while it counts, else the refusal
	// (an *apierr.Error). KeysChanged answers a channel that closes when
	// the gateway's revocation list next changes. nil: a key is judged
	// by the stream's calls alone.
	CheckKey    func(authorization string) error
	KeysChanged func() <-chan struct{}
}

// withDefaults fills the zero fields of c.
func (c WorkConfig) withDefaults() WorkConfig {
	if c.Stopping == nil {
		c.Stopping = context.Background()
	}
	if c.DrainWithin <= 0 {
		c.DrainWithin = 30 * time.Second
	}
	if c.KeepAlive <= 0 {
		c.KeepAlive = 15 * time.Second
	}
	if c.FetchWait <= 0 {
		c.FetchWait = 10 * time.Second
	}
	if c.FetchMax <= 0 || c.FetchMax > wire.MaxFetchBatch {
		c.FetchMax = wire.MaxFetchBatch
	}
	return c
}

// maxCredit bounds the credit a stream may hold, so a bad count cannot
// overflow it.
const maxCredit = 1 << 20

// stream is one worker's stream.
type stream struct {
	s     *Services
	ctx   context.Context
	bidi  *connect.BidiStream[jobbiev1.WorkRequest, jobbiev1.WorkResponse]
	hdr   http.Header // the call's passed metadata
	peer  string
	hello *jobbiev1.Hello
	lease *float64 // Hello's lease_duration, seconds

	sendMu   sync.Mutex
	lastSend time.Time
	closed   bool // the handler returned: a frame sent now goes nowhere

	mu       sync.Mutex
	credit   int
	held     map[string]wire.ReleaseEntry // jobs sent and not yet settled, by id
	draining bool                         // fetch no more: the gateway is stopping or the worker was drained
	drained  bool                         // the worker was drained, and told so
	ended    bool                         // the worker is gone or the stream is ending: send nothing more
	fetching bool                         // a fetch for credit is out (work_fetch.go)
	wake     chan struct{}                // credit or the stream's state changed: fetchLoop looks again
	watch    chan struct{}                // the same, for watchLoop
}

// Work serves a worker's stream.
func (s *Services) Work(ctx context.Context, bidi *connect.BidiStream[jobbiev1.WorkRequest, jobbiev1.WorkResponse]) error {
	first, err := bidi.Receive()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return fieldError("hello", "the stream's first frame must be hello")
		}
		return err
	}
	st := &stream{s: s, ctx: ctx, bidi: bidi, hdr: passedOf(bidi.RequestHeader(), passed), peer: bidi.Peer().Addr,
		held: map[string]wire.ReleaseEntry{}, wake: make(chan struct{}, 1), watch: make(chan struct{}, 1), lastSend: time.Now()}
	if err := st.greet(first.GetHello()); err != nil {
		return err
	}
	first.Hello = nil
	return st.run(first)
}

// greet checks the worker's hello.
func (st *stream) greet(h *jobbiev1.Hello) error {
	switch {
	case h == nil:
		return fieldError("hello", "the stream's first frame must be hello")
	case h.GetWorkerId() == "":
		return fieldError("hello.worker_id", "hello.worker_id is required")
	case len(h.GetQueues()) == 0:
		return fieldError("hello.queues", "hello.queues must name at least one queue")
	}
	if d := h.GetLeaseDuration(); d != "" {
		v, err := time.ParseDuration(d)
		if err != nil || v <= 0 {
			return fieldError("hello.lease_duration", "hello.lease_duration %q is not a positive duration", d)
		}
		secs := v.Seconds()
		st.lease = &secs
	}
	st.hello = h
	return nil
}

// received is what the reader saw: a frame, or the end of the worker's
// side (io.EOF when it closed it cleanly).
type received struct {
	f   *jobbiev1.WorkRequest
	err error
}

// run serves the stream until the worker closes it, it breaks, a fetch
// is refused for good, its key no longer counts, or a drain runs out.
// The jobs the worker still holds are released when it closed its side
// cleanly; otherwise their leases run out, as the worker may still be
// running them. A fetch still waiting on the shard is not waited for:
// it ends on its own, and what it leases then is released.
func (st *stream) run(first *jobbiev1.WorkRequest) error {
	frames := make(chan received, 64)
	go func() {
		for {
			f, err := st.bidi.Receive()
			select {
			case frames <- received{f, err}:
			case <-st.ctx.Done():
				return
			}
			if err != nil {
				return
			}
		}
	}()
	fetchCtx, stopFetching := context.WithCancel(context.WithoutCancel(st.ctx))
	fatal := make(chan error, 2)
	for _, loop := range []func(context.Context) error{st.fetchLoop, st.watchLoop} {
		go func() {
			if err := loop(fetchCtx); err != nil {
				fatal <- err
			}
		}()
	}
	keep := time.NewTicker(st.s.work.KeepAlive / 2)
	defer keep.Stop()
	var drainEnd <-chan time.Time
	stopping := st.s.work.Stopping.Done()
	keys := st.keysChanged()

	err, clean := st.handle(first), false
loop:
	for err == nil {
		select {
		case r := <-frames:
			if r.err != nil {
				clean = errors.Is(r.err, io.EOF)
				if !clean {
					err = r.err
				}
				break loop
			}
			err = st.handle(st.merge(r.f, frames))
		case err = <-fatal:
		case <-stopping:
			stopping = nil
			st.drain()
			t := time.NewTimer(st.s.work.DrainWithin)
			defer t.Stop()
			drainEnd = t.C
		case <-drainEnd:
			err = connect.NewError(connect.CodeUnavailable, errors.New("the gateway is stopping: reconnect"))
		case <-keys:
			keys = st.keysChanged()
			err = st.checkKey()
		case <-keep.C:
			if err = st.checkKey(); err == nil {
				err = st.keepAlive()
			}
		case <-st.ctx.Done():
			err = st.ctx.Err()
		}
	}
	st.mu.Lock()
	st.ended = true
	st.mu.Unlock()
	stopFetching()
	st.sendMu.Lock()
	st.closed = true
	st.sendMu.Unlock()
	if clean {
		st.releaseHeld()
		return nil
	}
	return err
}

// keysChanged is the channel that closes when the revocation list next
// changes; nil (never) without WorkConfig.KeysChanged.
func (st *stream) keysChanged() <-chan struct{} {
	if st.s.work.KeysChanged == nil {
		return nil
	}
	return st.s.work.KeysChanged()
}

// checkKey judges the stream's key again: one revoked, expired, rotated
// out or signed by a retired signing key ends the stream Unauthenticated,
// as the route would refuse its next call. A key that cannot be judged
// now (the revocation list is stale, 503) is left to the stream's calls,
// which are refused meanwhile.
func (st *stream) checkKey() error {
	if st.s.work.CheckKey == nil {
		return nil
	}
	err := st.s.work.CheckKey(st.hdr.Get("Authorization"))
	if err == nil {
		return nil
	}
	e := apierr.From(err)
	if apierr.Status(e.Code) != http.StatusUnauthorized {
		return nil
	}
	b, _ := json.Marshal(wire.ErrorBody{Error: e.Wire()})
	return answerError(Answer{Status: http.StatusUnauthorized, Body: b})
}

// merge joins to f the frames already waiting, up to a bound, so a busy
// stream's acks and heartbeats go out as one call each. A frame that
// ends the stream is put back for the loop.
func (st *stream) merge(f *jobbiev1.WorkRequest, frames chan received) *jobbiev1.WorkRequest {
	for range 64 {
		select {
		case r := <-frames:
			if r.err != nil {
				frames <- r // the reader has stopped: there is room, and it stays last
				return f
			}
			g := r.f
			if g.GetCredit() != nil {
				n := f.GetCredit().GetN() + g.GetCredit().GetN()
				f.Credit = &jobbiev1.Credit{N: n}
			}
			f.Acks = append(f.Acks, g.GetAcks()...)
			f.Fails = append(f.Fails, g.GetFails()...)
			f.Heartbeats = append(f.Heartbeats, g.GetHeartbeats()...)
			f.Enqueues = append(f.Enqueues, g.GetEnqueues()...)
			f.ExtendLeases = append(f.ExtendLeases, g.GetExtendLeases()...)
			if g.GetHello() != nil {
				f.Hello = g.GetHello()
			}
		default:
			return f
		}
	}
	return f
}

// drain tells the worker the gateway is stopping, and stops fetching.
func (st *stream) drain() {
	st.mu.Lock()
	st.draining = true
	st.mu.Unlock()
	st.nudge()
	_ = st.send(&jobbiev1.WorkResponse{Drain: &jobbiev1.Drain{Deadline: st.s.work.DrainWithin.String()}})
}

// workerDrained tells the worker, once, that it was drained (POST
// /api/v1/workers/{id}/drain: a fetch's or a heartbeat's answer says
// so), and stops fetching; the stream goes on serving its reports until
// the worker closes it. It reports whether the worker held no job then:
// such a stream has nothing left to do, and is ended.
func (st *stream) workerDrained() (idle bool) {
	st.mu.Lock()
	if st.drained {
		st.mu.Unlock()
		return false
	}
	st.drained, st.draining = true, true
	idle = len(st.held) == 0
	st.mu.Unlock()
	st.nudge()
	_ = st.send(&jobbiev1.WorkResponse{Drain: &jobbiev1.Drain{Worker: true}})
	return idle
}

// errDrained ends the stream of a drained worker that holds no job. A
// worker that reconnects at once after a Drain (as one told the gateway
// is stopping does) is refused so until its drain ends, rather than
// opening stream after stream.
func (st *stream) errDrained() error {
	return connect.NewError(connect.CodeFailedPrecondition,
		fmt.Errorf("worker %q is draining: it gets no more jobs (POST /api/v1/workers/{id}/drain)", st.hello.GetWorkerId()))
}

// keepAlive sends a KeepAlive when nothing was sent for KeepAlive.
func (st *stream) keepAlive() error {
	st.sendMu.Lock()
	idle := time.Since(st.lastSend)
	st.sendMu.Unlock()
	if idle < st.s.work.KeepAlive {
		return nil
	}
	return st.send(&jobbiev1.WorkResponse{KeepAlive: &jobbiev1.KeepAlive{}})
}

// send writes one frame; the stream's writers take turns. Once the
// handler returned it sends nothing.
func (st *stream) send(m *jobbiev1.WorkResponse) error {
	st.sendMu.Lock()
	defer st.sendMu.Unlock()
	if st.closed {
		return errStreamEnded
	}
	st.lastSend = time.Now()
	return st.bidi.Send(m)
}

var errStreamEnded = errors.New("the stream has ended")

// nudge wakes the fetches to look at the credit again.
func (st *stream) nudge() {
	for _, c := range [...]chan struct{}{st.wake, st.watch} {
		select {
		case c <- struct{}{}:
		default:
		}
	}
}

// passedOf is h's metadata of the lists of names a route reads.
func passedOf(h http.Header, lists ...[]string) http.Header {
	out := http.Header{}
	for _, names := range lists {
		for _, k := range names {
			if v := h.Values(k); len(v) > 0 {
				out[http.CanonicalHeaderKey(k)] = v
			}
		}
	}
	return out
}

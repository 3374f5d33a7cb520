package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"connectrpc.com/connect"

	jobbiev1 "github.com/jobbie/jobbie/proto/gen/jobbie/v1"
)

// One WorkerService.Work stream at a time, opened again with backoff
// when it breaks and at once after a drain.

// streamHTTPClient speaks HTTP/2 to url: h2c for http://, TLS for
// https:// (with the Client's own transport's TLS settings when it has
// an *http.Transport). HTTP/2 pings find a connection that went quiet.
func streamHTTPClient(c *Client, url string) *http.Client {
	tr := NewTransport()
	if t, ok := c.hc.Transport.(*http.Transport); ok {
		tr = t.Clone()
	}
	var p http.Protocols
	if strings.HasPrefix(url, "http://") {
		p.SetUnencryptedHTTP2(true)
	} else {
		p.SetHTTP2(true)
	}
	tr.Protocols = &p
	tr.HTTP2 = &http.HTTP2Config{SendPingTimeout: 30 * time.Second, PingTimeout: 15 * time.Second}
	return &http.Client{Transport: tr}
}

// connect keeps a stream open until the worker has shut down (sw.closed
// closes) or the server refuses it for good (sw.fatal). A worker that
// may fall back to HTTP does so (sw.fallback) when a stream ends before
// the server said anything, for a reason that is not the server's
// refusal, while the worker holds nothing the stream must settle.
func (sw *streamWorker) connect(base context.Context) {
	bo := backoff{p: sw.w.c.retry}
	for {
		drained, heard, err := sw.session(base)
		select {
		case <-sw.closed:
			return
		default:
		}
		// Drained by the server (POST /api/v1/workers/{id}/drain): the
		// stream ended once the worker held nothing, or was refused
		// because the drain lasts; Run returns, as over HTTP.
		if (drained && sw.workerDrain.Load()) || connect.CodeOf(err) == connect.CodeFailedPrecondition {
			sw.w.log.Info("jobbie worker: drained, finishing held jobs", "worker", sw.w.cfg.WorkerID)
			close(sw.drainedOut)
			return
		}
		if sw.auto && !drained && !heard && !refusal(err) && sw.held.Load() == 0 && !sw.out.inFlight() {
			sw.w.log.Warn("jobbie worker: stream unreachable, falling back to HTTP", "worker", sw.w.cfg.WorkerID, "url", sw.url, "err", err)
			close(sw.fallback)
			return
		}
		if permanentStream(err) {
			if connect.CodeOf(err) == connect.CodeUnimplemented {
				err = fmt.Errorf("%w at %s: %w", ErrNoStream, sw.url, err)
			}
			sw.w.log.Error("jobbie worker: stream refused, stopping", "worker", sw.w.cfg.WorkerID, "err", err)
			sw.w.setFatal(err)
			sw.fatalOnce.Do(func() { close(sw.fatal) })
			return
		}
		wait := bo.next(err)
		if drained {
			bo.reset()
			wait = 0
		} else {
			sw.w.log.Warn("jobbie worker: stream broke, reconnecting", "worker", sw.w.cfg.WorkerID, "err", err, "in", wait)
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-sw.closed:
			t.Stop()
			return
		}
	}
}

// permanentStream reports a refusal a new stream would get again: a bad
// key, a forbidden queue, bad input.
func permanentStream(err error) bool {
	switch connect.CodeOf(err) {
	case connect.CodeUnauthenticated, connect.CodePermissionDenied, connect.CodeInvalidArgument, connect.CodeNotFound,
		connect.CodeUnimplemented:
		return err != nil
	}
	return false
}

// session runs one stream: hello and the credit there is room for,
// then frames both ways until it ends. drained reports a stream the
// worker closed on the server's Drain, or at its own shutdown; heard, a
// stream the server sent a frame on.
func (sw *streamWorker) session(base context.Context) (drained, heard bool, err error) {
	ctx, cancel := context.WithCancel(base)
	defer cancel()
	// The stream's connection, to send and receive streamCodec's frames.
	bidi, err := sw.api.Work(ctx).Conn()
	if err != nil {
		return false, false, err
	}
	defer func() { _ = bidi.CloseResponse() }() // resets the stream if it is still open
	for k, vs := range sw.w.c.header {
		for _, v := range vs {
			bidi.RequestHeader().Add(k, v)
		}
	}
	sw.drained.Store(false)
	sw.out.resetCredit(int32(sw.room()))
	hello := &jobbiev1.WorkRequest{Hello: &jobbiev1.Hello{WorkerId: sw.w.cfg.WorkerID, Hostname: sw.w.cfg.Hostname,
		Queues: sw.w.cfg.Queues, Concurrency: int32(sw.w.cfg.Concurrency), LeaseDuration: leaseOf(sw.w.cfg.LeaseDuration),
		JsonPayloads: true}} // the JSON a handler reads, without the Value's round trip both ends
	if f := sw.out.take(!sw.noCredit()); f != nil {
		hello.Credit, hello.Acks, hello.Fails, hello.Heartbeats = f.Credit, f.Acks, f.Fails, f.Heartbeats
	}
	defer sw.out.resend()
	recvDone := make(chan error, 1)
	var got atomic.Bool
	defer func() { heard = got.Load() }()
	var draining sync.Once
	drain := make(chan struct{})
	go func() {
		recvDone <- sw.receive(bidi, &got, func() { draining.Do(func() { close(drain) }) })
	}()
	// abort ends a stream this side gave up on: closing both sides
	// unblocks the reader, which a cancelled ctx alone does not while the
	// request body is open.
	abort := func(err error) (bool, bool, error) {
		cancel()
		_ = bidi.CloseRequest()
		_ = bidi.CloseResponse()
		return false, false, errors.Join(err, <-recvDone)
	}
	if err := bidi.Send(hello); err != nil && !errors.Is(err, io.EOF) {
		return abort(err)
	}
	closing := false
	for {
		select {
		case err := <-recvDone:
			if closing && (err == nil || errors.Is(err, io.EOF)) {
				return true, false, nil
			}
			_ = bidi.CloseRequest()
			if err == nil || errors.Is(err, io.EOF) {
				err = errors.New("the server ended the stream")
			}
			return false, false, err
		case <-sw.out.ready:
			// Let the handlers that are about to settle put their reports
			// first: more to a frame, fewer frames and writes.
			runtime.Gosched()
			if f := sw.out.take(!sw.noCredit() && !closing); f != nil {
				if err := bidi.Send(f); err != nil {
					return abort(err)
				}
			}
		case <-drain:
			drain = nil
			sw.drained.Store(true)
		case <-sw.changed:
		case <-base.Done():
			return abort(base.Err())
		}
		// Close once the worker holds nothing and awaits no answer: on a
		// drain (to reconnect) or at shutdown.
		if !closing && (drain == nil || sw.shuttingDown()) && sw.held.Load() == 0 && !sw.out.inFlight() {
			closing = true
			_ = bidi.CloseRequest()
		}
	}
}

// receive reads the server's frames until the stream ends.
func (sw *streamWorker) receive(bidi connect.StreamingClientConn, heard *atomic.Bool, drain func()) error {
	for {
		var f streamFrame
		if err := bidi.Receive(&f); err != nil {
			return err
		}
		res := &f.res
		heard.Store(true)
		for _, r := range res.GetResults() {
			sw.out.answer(r)
		}
		for _, c := range res.GetCancels() {
			sw.cancelJob(c.GetJobId(), c.GetLeaseToken())
		}
		for _, j := range f.jobs {
			sw.start(j)
		}
		if d := res.GetDrain(); d != nil {
			if d.GetWorker() {
				sw.workerDrain.Store(true)
			}
			drain()
		}
		sw.nudge()
	}
}

// leaseOf is a lease as hello's lease_duration: "" for the job's own.
func leaseOf(d time.Duration) string {
	if d <= 0 {
		return ""
	}
	return d.String()
}

package client

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	"connectrpc.com/connect"
)

// Transport is how a Worker gets its jobs and reports on them.
type Transport int

const (
	// TransportAuto, the default, works over the worker stream and falls
	// back to HTTP: the worker finds the gateway's gRPC port
	// (WorkerConfig.StreamURL, else what GET /api/v1/info says) and holds
	// a stream there; when there is none, or it cannot be reached
	// (connection refused, no HTTP/2 on the way, the method not served),
	// it long-polls over HTTP instead and tries the stream again later
	// (after StreamRetry, doubling up to ten times that), switching back
	// once its running jobs are done. Worker.Transport says which it uses.
	TransportAuto Transport = iota
	// TransportHTTP long-polls the HTTP API: Concurrency fetch loops, an
	// ack or fail call per job, one batched heartbeat call.
	TransportHTTP
	// TransportStream holds one WorkerService.Work stream to the
	// gateway's gRPC port (WorkerConfig.StreamURL, else the gateway's
	// GET /api/v1/info): jobs come down it up to the credit the worker
	// grants (Concurrency), and acks, fails and heartbeats go up it, many
	// to a frame under load. A broken stream is opened again with
	// backoff; on the server's Drain the worker finishes its jobs, closes
	// the stream and opens a new one. Run fails at once when the gateway
	// serves no gRPC port or the port does not serve the stream.
	// JobContext.Checkpoint stores its checkpoint with an HTTP heartbeat
	// call all the same (it waits for the answer).
	TransportStream
)

func (t Transport) String() string {
	switch t {
	case TransportAuto:
		return "auto"
	case TransportHTTP:
		return "http"
	case TransportStream:
		return "stream"
	}
	return fmt.Sprintf("Transport(%d)", int(t))
}

// ErrNoStream is what Run returns for a worker told TransportStream when
// the gateway serves no gRPC port (it was started without --grpc-addr)
// or the port does not serve the worker stream.
var ErrNoStream = errors.New("jobbie: the gateway serves no worker stream")

// discoverWait bounds the GET /api/v1/info that finds the gRPC port.
const discoverWait = 10 * time.Second

// Transport is the transport the worker works over now: TransportStream
// or TransportHTTP once Run has chosen, else the configured one.
func (w *Worker) Transport() Transport { return Transport(w.using.Load()) }

// use records the transport the worker works over now, and says so in
// the log.
func (w *Worker) use(t Transport, why string, args ...any) {
	w.using.Store(int32(t))
	w.log.Info("jobbie worker: working over "+t.String()+": "+why, append([]any{"worker", w.cfg.WorkerID}, args...)...)
}

// streamURL is WorkerConfig.StreamURL, or the gRPC URL the gateway
// tells; "" and nil when it serves none (or, answering 404, does not say:
// a self-hosted node's local API).
func (w *Worker) streamURL(ctx context.Context) (string, error) {
	if w.cfg.StreamURL != "" {
		return w.cfg.StreamURL, nil
	}
	ctx, cancel := context.WithTimeout(ctx, discoverWait)
	defer cancel()
	info, err := w.c.Info(ctx)
	if IsNotFound(err) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("jobbie: finding the gateway's gRPC port: %w", err)
	}
	if info.GRPCURL != "" && !strings.HasPrefix(info.GRPCURL, "http://") && !strings.HasPrefix(info.GRPCURL, "https://") {
		return "", fmt.Errorf("jobbie: the gateway's gRPC URL %q is not an http:// or https:// URL", info.GRPCURL)
	}
	return info.GRPCURL, nil
}

// runOnStream is Run with TransportStream: the stream or a clear error.
func (w *Worker) runOnStream(ctx context.Context) error {
	u, err := w.streamURL(ctx)
	switch {
	case err != nil:
		return err
	case u == "":
		return fmt.Errorf("%w: GET %s/api/v1/info names no gRPC port (start the gateway with --grpc-addr, or set WorkerConfig.StreamURL)",
			ErrNoStream, w.c.BaseURL())
	}
	w.use(TransportStream, "as configured", "url", u)
	_, err = w.runStream(ctx, u, false)
	return err
}

// runAuto is Run with TransportAuto: the stream while it can be had,
// HTTP meanwhile.
func (w *Worker) runAuto(ctx context.Context) error {
	retry := w.cfg.StreamRetry
	for {
		u, err := w.streamURL(ctx)
		switch {
		case err != nil:
			w.use(TransportHTTP, "the stream is not found", "err", err)
		case u == "":
			w.use(TransportHTTP, "the gateway serves no gRPC port")
		default:
			w.use(TransportStream, "trying the gRPC port", "url", u)
			fellBack, err := w.runStream(ctx, u, true)
			if !fellBack {
				return err
			}
			w.use(TransportHTTP, "the stream cannot be reached", "url", u, "retry in", retry)
		}
		switched, err := w.runHTTP(ctx, w.streamProbe(retry))
		if !switched {
			return err
		}
		retry = min(2*retry, 10*w.cfg.StreamRetry)
	}
}

// streamProbe says, every wait, whether the stream looks reachable now:
// the gateway names a gRPC port and it takes a connection. A worker
// on HTTP then finishes its jobs and tries the stream.
func (w *Worker) streamProbe(wait time.Duration) func(context.Context) bool {
	return func(ctx context.Context) bool {
		for sleepCtx(ctx, wait) {
			if u, err := w.streamURL(ctx); err == nil && u != "" && dialable(ctx, u) {
				return true
			}
			wait = min(2*wait, 10*w.cfg.StreamRetry)
		}
		return false
	}
}

// dialable reports whether a TCP connection to u's host opens.
func dialable(ctx context.Context, u string) bool {
	p, err := url.Parse(u)
	if err != nil {
		return false
	}
	host := p.Host
	if p.Port() == "" {
		port := "80"
		if p.Scheme == "https" {
			port = "443"
		}
		host = net.JoinHostPort(p.Hostname(), port)
	}
	ctx, cancel := context.WithTimeout(ctx, discoverWait)
	defer cancel()
	conn, err := (&net.Dialer{}).DialContext(ctx, "tcp", host)
	if err != nil {
		return false
	}
	_ = conn.Close()
	return true
}

// refusal reports a stream error the server decided, which HTTP would
// get too: a bad key, a forbidden queue, bad input, an unknown namespace.
func refusal(err error) bool {
	switch connect.CodeOf(err) {
	case connect.CodeUnauthenticated, connect.CodePermissionDenied, connect.CodeInvalidArgument, connect.CodeNotFound:
		return err != nil
	}
	return false
}

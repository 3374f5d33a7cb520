package main

import (
	"context"
	"io"
	"net"
	"net/url"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/client"
)

// autoWorker runs a worker with cfg whose handler tells, by job id,
// the transport the worker was on when it ran the job.
type autoWorker struct {
	w    *client.Worker
	ran  chan [2]string // job id, transport
	done chan error
	stop context.CancelFunc
}

func startWorker(t *testing.T, api *client.Client, cfg client.WorkerConfig) *autoWorker {
	t.Helper()
	a := &autoWorker{ran: make(chan [2]string, 100), done: make(chan error, 1)}
	a.w = client.NewWorker(api, cfg, func(ctx context.Context, job *client.JobContext) (any, error) {
		a.ran <- [2]string{job.ID, a.w.Transport().String()}
		return nil, nil
	})
	ctx, stop := context.WithCancel(context.Background())
	a.stop = stop
	go func() { a.done <- a.w.Run(ctx) }()
	t.Cleanup(func() {
		stop()
		<-a.done
	})
	return a
}

// works enqueues a job on queue and returns the transport it ran over.
func (a *autoWorker) works(t *testing.T, api *client.Client, queue string) string {
	t.Helper()
	res, err := api.Enqueue(context.Background(), client.EnqueueRequest{Queue: queue})
	require.NoError(t, err)
	select {
	case got := <-a.ran:
		require.Equal(t, res.JobID, got[0])
		return got[1]
	case err := <-a.done:
		t.Fatalf("the worker stopped: %v", err)
	case <-time.After(time.Minute):
		t.Fatal("the job did not run within a minute")
	}
	return ""
}

// A worker with the default options against a gateway serving gRPC
// finds the stream (GET /api/v1/info) and works over it. Told a gRPC
// address nothing listens on, it works over HTTP meanwhile, and moves to
// the stream once the address answers.
func TestWorkerStreamsByDefaultAgainstDev(t *testing.T) {
	t.Parallel()
	d := startDevIn(t, t.TempDir(), "--grpc-addr", "127.0.0.1:0")
	ctx := context.Background()
	api := client.New(d.gateway, readKey(t, filepath.Join(d.dir, "owner.key")))
	info, err := api.Info(ctx)
	require.NoError(t, err)
	require.Equal(t, d.grpc, info.GRPCURL)

	a := startWorker(t, api, client.WorkerConfig{Queues: []string{"auto"}, Concurrency: 2})
	require.Equal(t, "stream", a.works(t, api, "auto"))
	require.Equal(t, client.TransportStream, a.w.Transport())

	// The stream's address refuses connections at first: HTTP; then it
	// forwards to the gateway's gRPC port: the stream.
	addr := freeAddr(t)
	b := startWorker(t, api, client.WorkerConfig{Queues: []string{"later"}, Concurrency: 2,
		StreamURL: "http://" + addr, StreamRetry: 100 * time.Millisecond})
	require.Equal(t, "http", b.works(t, api, "later"))
	target, err := url.Parse(d.grpc)
	require.NoError(t, err)
	conns := forward(t, addr, target.Host)
	eventually(t, "the worker on the stream", func() bool { return b.w.Transport() == client.TransportStream })
	require.Equal(t, "stream", b.works(t, api, "later"))
	require.Positive(t, conns.Load(), "the stream went through the forwarder")
	a.stop() // both at once: each closing stream waits out the gateway's long-poll
	b.stop()
	for _, w := range []*autoWorker{a, b} {
		require.NoError(t, <-w.done)
		w.done <- nil // for the cleanup
	}
}

// Against a gateway without gRPC a worker with the default options
// works over HTTP; so does one pointed at a port that speaks no HTTP/2
// (the HTTP API's own). A worker told TransportStream fails at once,
// saying the gateway serves no stream.
func TestWorkerFallsBackToHTTPAgainstDev(t *testing.T) {
	t.Parallel()
	d := startDevIn(t, t.TempDir())
	ctx := context.Background()
	api := client.New(d.gateway, readKey(t, filepath.Join(d.dir, "owner.key")))
	info, err := api.Info(ctx)
	require.NoError(t, err)
	require.Empty(t, info.GRPCURL)

	a := startWorker(t, api, client.WorkerConfig{Queues: []string{"plain"}, Concurrency: 2})
	for range 3 {
		require.Equal(t, "http", a.works(t, api, "plain"))
	}
	require.Equal(t, client.TransportHTTP, a.w.Transport())

	b := startWorker(t, api, client.WorkerConfig{Queues: []string{"h1"}, Concurrency: 2, StreamURL: d.gateway})
	require.Equal(t, "http", b.works(t, api, "h1"))

	w := client.NewWorker(api, client.WorkerConfig{Queues: []string{"plain"}, Transport: client.TransportStream},
		func(context.Context, *client.JobContext) (any, error) { return nil, nil })
	runCtx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	err = w.Run(runCtx)
	require.ErrorIs(t, err, client.ErrNoStream)
	require.ErrorContains(t, err, "--grpc-addr")
	require.NoError(t, runCtx.Err(), "it failed at once, not at the test's bound")
}

// forward accepts connections on addr and pipes each to target, until
// the test ends; it counts the connections.
func forward(t *testing.T, addr, target string) *atomic.Int64 {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	require.NoError(t, err)
	var n atomic.Int64
	var wg sync.WaitGroup
	var mu sync.Mutex
	var open []net.Conn
	closed := false
	t.Cleanup(func() {
		_ = ln.Close()
		mu.Lock()
		closed = true
		for _, c := range open {
			_ = c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	wg.Go(func() {
		for {
			in, err := ln.Accept()
			if err != nil {
				return
			}
			out, err := net.Dial("tcp", target)
			if err != nil {
				_ = in.Close()
				continue
			}
			n.Add(1)
			mu.Lock()
			if closed {
				mu.Unlock()
				_, _ = in.Close(), out.Close()
				return
			}
			open = append(open, in, out)
			mu.Unlock()
			wg.Go(func() { _, _ = io.Copy(out, in); _ = out.Close() })
			wg.Go(func() { _, _ = io.Copy(in, out); _ = in.Close() })
		}
	})
	return &n
}

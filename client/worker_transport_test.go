package client_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/client"
)

// noStreamServer is an HTTP/2 (h2c) server that serves no gRPC method:
// every call is 404, which a gRPC client reads as Unimplemented.
func noStreamServer(t *testing.T) string { return h2cServer(t, http.NotFoundHandler()) }

// h2cServer serves h over HTTP/1.1 and h2c, and returns its URL.
func h2cServer(t *testing.T, h http.Handler) string {
	t.Helper()
	srv := httptest.NewUnstartedServer(h)
	var p http.Protocols
	p.SetHTTP1(true)
	p.SetUnencryptedHTTP2(true)
	srv.Config.Protocols = &p
	srv.Start()
	t.Cleanup(srv.Close)
	return srv.URL
}

func quietWorker(c *client.Client, cfg client.WorkerConfig, h client.Handler) *client.Worker {
	cfg.Queues = []string{"q"}
	cfg.FetchTimeout = 50 * time.Millisecond
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	return client.NewWorker(c, cfg, h)
}

func ack(context.Context, *client.JobContext) (any, error) { return nil, nil }

// A worker told TransportStream fails at once, with ErrNoStream, when the
// gateway names no gRPC port, or when the port it names does not serve
// the stream.
func TestStreamWorkerWithoutAStream(t *testing.T) {
	t.Parallel()
	f := newFakeServer(t)
	f.grpcAt("")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := quietWorker(f.client(t), client.WorkerConfig{Transport: client.TransportStream}, ack).Run(ctx)
	require.ErrorIs(t, err, client.ErrNoStream, "the gateway does not answer GET /api/v1/info")
	require.ErrorContains(t, err, "--grpc-addr")

	f.grpcAt(noStreamServer(t))
	err = quietWorker(f.client(t), client.WorkerConfig{Transport: client.TransportStream}, ack).Run(ctx)
	require.ErrorIs(t, err, client.ErrNoStream)
	require.NoError(t, ctx.Err(), "it failed at once")
}

// A worker with the default transport that finds no stream (the
// gateway does not say where, or its gRPC port serves none) works over
// HTTP, and says so.
func TestAutoWorkerFallsBackToHTTP(t *testing.T) {
	t.Parallel()
	for name, grpcURL := range map[string]string{"no info": "", "no stream there": noStreamServer(t)} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f := newFakeServer(t)
			f.grpcAt(grpcURL)
			w := quietWorker(f.client(t), client.WorkerConfig{}, ack)
			require.Equal(t, client.TransportAuto, w.Transport())
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- w.Run(ctx) }()
			f.add("job_1", `{}`)
			require.Equal(t, "job_1", recv(t, f.acks).ID)
			require.Equal(t, client.TransportHTTP, w.Transport())
			cancel()
			require.NoError(t, recv(t, done))
		})
	}
}

// A stream worker whose gRPC port refuses every connection (a gateway
// restarting) reconnects with backoff, not at once: a second holds a
// handful of tries, not thousands.
func TestStreamWorkerBacksOffWhileThePortIsClosed(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var tries atomic.Int64
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			tries.Add(1)
			_ = c.Close() // as a port no one serves: the stream breaks at once
		}
	}()
	t.Cleanup(func() { _ = ln.Close() })
	f := newFakeServer(t)
	ctx, cancel := context.WithCancel(context.Background())
	w := quietWorker(f.client(t), client.WorkerConfig{Transport: client.TransportStream, StreamURL: "http://" + ln.Addr().String()}, ack)
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	start := time.Now()
	for tries.Load() < 2 {
		time.Sleep(5 * time.Millisecond)
		if time.Since(start) > time.Minute {
			t.Fatal("the worker never tried the stream")
		}
	}
	// The measure is the tries within a second: load can only make
	// them fewer.
	time.Sleep(time.Second)
	n := tries.Load()
	cancel()
	<-done
	require.Less(t, n, int64(30), "tries within a second: the reconnects are not backed off")
}

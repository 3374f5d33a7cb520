package client

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"go.opentelemetry.io/otel/trace"
)

// WorkerConfig configures a Worker. Zero fields take the defaults noted.
type WorkerConfig struct {
	// Queues to fetch from, in the server's priority order. Required.
	Queues []string
	// Concurrency is how many jobs run at once (one fetch loop each).
	// Default 10.
	Concurrency int
	// WorkerID names this worker in the console. Default
	// "<hostname>-<pid>-<random>".
	WorkerID string
	// Hostname is reported with every fetch. Default os.Hostname().
	Hostname string
	// LeaseDuration asks the server for leases of this length. Default:
	// the queue's (60s unless configured).
	LeaseDuration time.Duration
	// HeartbeatInterval is how often one batched heartbeat extends the
	// leases of all running jobs and reports their progress. Default 15s,
	// or a third of LeaseDuration if that is shorter.
	HeartbeatInterval time.Duration
	// FetchTimeout is how long one fetch long-polls. Default 30s.
	FetchTimeout time.Duration
	// ShutdownGrace is how long running jobs may take to finish once Run's
	// context is cancelled; those still running are then failed with
	// "worker_shutdown". Default 30s.
	ShutdownGrace time.Duration
	// Logger receives operational warnings. Default slog.Default().
	Logger *slog.Logger
	// Transport is how jobs come and reports go: TransportAuto (the
	// default: the worker stream, falling back to HTTP), TransportHTTP or
	// TransportStream.
	Transport Transport
	// StreamURL is the gateway's gRPC address: "http://host:port" for
	// HTTP/2 without TLS (h2c), "https://host:port" for TLS. Default: the
	// one the gateway tells (GET /api/v1/info, Client.Info), asked at
	// each attempt. The Client's key and namespace go with the stream.
	StreamURL string
	// StreamRetry is how long a TransportAuto worker that fell back to
	// HTTP works over it before it looks at the stream again; each look
	// that finds it still out of reach doubles the wait, up to ten times
	// this. Default 1m.
	StreamRetry time.Duration
	// TracerProvider records the `process <queue>` span of each job the
	// handler runs (worker_tracing.go). Default: the global one
	// (otel.GetTracerProvider), which records nothing until the program
	// installs an OpenTelemetry SDK.
	TracerProvider trace.TracerProvider
}

// WithDefaults returns the config with zero fields set to their defaults.
func (c WorkerConfig) WithDefaults() WorkerConfig {
	if c.Concurrency == 0 {
		c.Concurrency = 10
	}
	if c.Hostname == "" {
		c.Hostname, _ = os.Hostname()
	}
	if c.WorkerID == "" {
		var b [4]byte
		_, _ = rand.Read(b[:])
		c.WorkerID = fmt.Sprintf("%s-%d-%s", c.Hostname, os.Getpid(), hex.EncodeToString(b[:]))
	}
	if c.HeartbeatInterval == 0 {
		c.HeartbeatInterval = 15 * time.Second
		if third := c.LeaseDuration / 3; third > 0 && third < c.HeartbeatInterval {
			c.HeartbeatInterval = third
		}
	}
	if c.FetchTimeout == 0 {
		c.FetchTimeout = 30 * time.Second
	}
	if c.ShutdownGrace == 0 {
		c.ShutdownGrace = 30 * time.Second
	}
	if c.StreamRetry == 0 {
		c.StreamRetry = time.Minute
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c
}

// Validate reports a config that cannot work.
func (c WorkerConfig) Validate() error {
	var errs []error
	if len(c.Queues) == 0 {
		errs = append(errs, errors.New("no queues"))
	}
	if c.Concurrency < 1 {
		errs = append(errs, fmt.Errorf("concurrency %d is below 1", c.Concurrency))
	}
	if c.HeartbeatInterval <= 0 || c.FetchTimeout <= 0 || c.ShutdownGrace < 0 || c.LeaseDuration < 0 || c.StreamRetry <= 0 {
		errs = append(errs, errors.New("intervals and timeouts must be positive"))
	}
	if c.Transport != TransportAuto && c.Transport != TransportHTTP && c.Transport != TransportStream {
		errs = append(errs, fmt.Errorf("transport %d is not TransportAuto, TransportHTTP or TransportStream", c.Transport))
	}
	if c.StreamURL != "" && !strings.HasPrefix(c.StreamURL, "http://") && !strings.HasPrefix(c.StreamURL, "https://") {
		errs = append(errs, fmt.Errorf("stream URL %q is not an http:// or https:// URL", c.StreamURL))
	}
	if c.LeaseDuration > 0 && c.HeartbeatInterval >= c.LeaseDuration {
		errs = append(errs, fmt.Errorf("heartbeat interval %s is not shorter than the lease %s", c.HeartbeatInterval, c.LeaseDuration))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("client: worker config: %w", err)
	}
	return nil
}

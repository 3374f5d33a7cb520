package bench

import (
	"crypto/tls"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// Transports.
const (
	TransportFast = "fasthttp"
	TransportStd  = "nethttp"
	// TransportStream: the workers each hold a WorkerService.Work stream
	// to GRPCURL (stream.go); the producers enqueue with fasthttp.
	TransportStream = "stream"
)

// Config describes one bench run. Zero fields take the defaults noted.
type Config struct {
	// URL is the gateway's base URL and Key its API key; Namespace, if set,
	// is sent as X-Jobbie-Namespace.
	URL       string
	Key       string
	Namespace string

	// DirectURL, when set, sends the load straight to a shard at this URL
	// (https) instead of the gateway, naming ShardNamespace ("<tenant
	// id>/<namespace>"); TLS must then present an operator certificate.
	DirectURL      string
	ShardNamespace string
	// TLS is the client's TLS configuration for https URLs.
	TLS *tls.Config

	// Producers and Workers are the concurrent enqueue and fetch loops.
	// Defaults 4 and 16 (in latency mode: 1 producer, 4 workers).
	Producers int
	Workers   int
	// Batch is the number of jobs per enqueue call; 1 (the default) uses
	// the single enqueue endpoint, more uses enqueue/batch.
	Batch int
	// FetchBatch is the most jobs a worker fetches per call; 1 (the
	// default) uses the single fetch endpoint, more uses fetch/batch.
	FetchBatch int
	// AckBatch is the most jobs a worker acks per call; 1 (the default)
	// uses the single ack endpoint, more uses ack/batch (the jobs of one
	// fetch are acked in calls of up to AckBatch).
	AckBatch int
	// Duration bounds the run. Default 10s, unless Jobs is set.
	Duration time.Duration
	// Jobs stops the run once this many jobs were acked (0: no limit).
	Jobs int64
	// Queue is the queue the jobs go to. Default "bench".
	Queue string
	// PayloadSize is the size in bytes of each job's JSON payload
	// (at least 8). Default 64.
	PayloadSize int
	// FetchTimeout is the long-poll wait of one fetch. Default 1s, which
	// also bounds how long the end of a run waits for idle workers.
	FetchTimeout time.Duration
	// MaxOutstanding caps the jobs enqueued but not yet fetched; producers
	// wait while it is reached. Default 10000.
	MaxOutstanding int64
	// Latency switches to latency mode: one job at a time to idle workers.
	Latency bool
	// Transport is TransportFast (default), TransportStd or
	// TransportStream.
	Transport string
	// GRPCURL is the gateway's gRPC address for TransportStream, e.g.
	// "http://127.0.0.1:9090" (h2c).
	GRPCURL string
	// ProgressEvery is the interval of progress lines; negative disables
	// them. Default 1s.
	ProgressEvery time.Duration
	// Rate paces the producers: at most this many jobs enqueued per
	// second in all, evenly spaced (0: as fast as the server accepts).
	Rate float64

	// Push mode: no workers; the queue is made a push queue to an HTTPS
	// receiver the run serves on 127.0.0.1 with PushCert and PushKey
	// (made, self-signed, when neither exists: see receiverCert), and a
	// job counts as completed by the queue's own counts. PushInFlight is
	// the queue's max_in_flight (default 32, the dispatcher's bound per
	// tenant).
	Push         bool
	PushCert     string
	PushKey      string
	PushInFlight int
}

// WithDefaults returns the config with zero fields set to their defaults.
func (c Config) WithDefaults() Config {
	if c.Producers == 0 {
		c.Producers = pick(c.Latency, 1, 4)
	}
	if c.Workers == 0 && !c.Push {
		c.Workers = pick(c.Latency, 4, 16)
	}
	if c.Push && c.PushInFlight == 0 {
		c.PushInFlight = 32
	}
	if c.Push && c.PushCert == "" {
		c.PushCert, c.PushKey = "jobbie-bench-receiver.crt", "jobbie-bench-receiver.key"
	}
	if c.Batch == 0 {
		c.Batch = 1
	}
	if c.FetchBatch == 0 {
		c.FetchBatch = 1
	}
	if c.AckBatch == 0 {
		c.AckBatch = 1
	}
	if c.Duration == 0 && c.Jobs == 0 {
		c.Duration = 10 * time.Second
	}
	if c.Queue == "" {
		c.Queue = "bench"
	}
	if c.PayloadSize == 0 {
		c.PayloadSize = 64
	}
	if c.FetchTimeout == 0 {
		c.FetchTimeout = time.Second
	}
	if c.MaxOutstanding == 0 {
		c.MaxOutstanding = 10_000
	}
	if c.Transport == "" {
		c.Transport = TransportFast
	}
	if c.ProgressEvery == 0 {
		c.ProgressEvery = time.Second
	}
	return c
}

func pick(cond bool, yes, no int) int {
	if cond {
		return yes
	}
	return no
}

// Validate reports a config that cannot run.
func (c Config) Validate() error {
	var errs []error
	if c.DirectURL != "" {
		if c.TLS == nil || !strings.HasPrefix(c.DirectURL, "https://") {
			errs = append(errs, errors.New("direct mode is mutual TLS: an https:// shard URL and an operator certificate"))
		}
		if _, _, err := tenancy.ParseShardNamespace(c.ShardNamespace); err != nil {
			errs = append(errs, err)
		}
	} else if c.URL == "" {
		errs = append(errs, errors.New("no URL"))
	}
	if err := checkURL(c.target()); err != nil {
		errs = append(errs, err)
	}
	if c.Producers < 1 || (c.Workers < 1 && !c.Push) || c.Batch < 1 {
		errs = append(errs, errors.New("producers, workers and batch must be at least 1"))
	}
	if c.Push && (c.Latency || c.Workers != 0 || c.FetchBatch != 1 || c.AckBatch != 1) {
		errs = append(errs, errors.New("push mode has no workers: the server delivers to the run's receiver (no latency mode, workers, fetch or ack batch)"))
	}
	if c.Push && (c.PushInFlight < 1 || c.PushInFlight > wire.MaxPushMaxInFlight || c.PushKey == "") {
		errs = append(errs, fmt.Errorf("push mode needs max in flight between 1 and %d and the receiver's certificate and key files", wire.MaxPushMaxInFlight))
	}
	if c.Rate < 0 {
		errs = append(errs, errors.New("rate must not be negative"))
	}
	if c.FetchBatch < 1 || c.FetchBatch > maxWorkerBatch || c.AckBatch < 1 || c.AckBatch > maxWorkerBatch {
		errs = append(errs, fmt.Errorf("fetch batch and ack batch must be between 1 and %d", maxWorkerBatch))
	}
	if c.Latency && (c.Batch != 1 || c.FetchBatch != 1 || c.AckBatch != 1) {
		errs = append(errs, errors.New("latency mode sends single jobs (batch, fetch batch and ack batch 1)"))
	}
	if c.Duration < 0 || c.Jobs < 0 || c.FetchTimeout <= 0 || c.MaxOutstanding < 1 {
		errs = append(errs, errors.New("duration, jobs, fetch timeout and max outstanding must be positive"))
	}
	if c.PayloadSize < 8 {
		errs = append(errs, fmt.Errorf("payload size %d is below 8 bytes", c.PayloadSize))
	}
	if err := tenancy.ValidateQueue(c.Queue); err != nil {
		errs = append(errs, err)
	}
	switch c.Transport {
	case TransportFast, TransportStd:
	case TransportStream:
		if !strings.HasPrefix(c.GRPCURL, "http://") && !strings.HasPrefix(c.GRPCURL, "https://") {
			errs = append(errs, fmt.Errorf("transport stream needs the gateway's gRPC URL (http:// or https://), not %q", c.GRPCURL))
		}
		if c.DirectURL != "" || c.Push || c.Latency {
			errs = append(errs, errors.New("transport stream is a gateway's workers: not with direct, push or latency mode"))
		}
	default:
		errs = append(errs, fmt.Errorf("transport %q is not %s, %s or %s", c.Transport, TransportFast, TransportStd, TransportStream))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	return nil
}

// target is the base URL the load goes to.
func (c Config) target() string {
	if c.DirectURL != "" {
		return strings.TrimRight(c.DirectURL, "/")
	}
	return strings.TrimRight(c.URL, "/")
}

func checkURL(u string) error {
	if !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") {
		return fmt.Errorf("URL %q must start with http:// or https://", u)
	}
	return nil
}

// headers are the headers of every request.
func (c Config) headers() []header {
	if c.DirectURL != "" {
		return []header{{client.ShardNamespaceHeader, c.ShardNamespace}}
	}
	var h []header
	if c.Key != "" {
		h = append(h, header{"Authorization", "Bearer " + c.Key})
	}
	if c.Namespace != "" {
		h = append(h, header{client.NamespaceHeader, c.Namespace})
	}
	return h
}

func (c Config) newTransport() transport {
	conns := c.Producers + c.Workers + 4
	if c.Transport == TransportStd {
		return newStdTransport(c.target(), c.headers(), conns, c.TLS)
	}
	return newFastTransport(c.target(), c.headers(), conns, c.TLS)
}

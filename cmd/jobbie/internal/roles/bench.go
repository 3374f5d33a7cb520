package roles

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/jobbie/jobbie/cmd/jobbie/internal/cli"
	"github.com/jobbie/jobbie/internal/bench"
	"github.com/jobbie/jobbie/internal/pki"
)

// benchCmd is `jobbie bench`: load against a gateway, or straight at a
// shard, reporting throughput and latency.
func benchCmd() *cobra.Command {
	var (
		cfg    bench.Config
		outFmt string
		direct roleTLS
		api    *cli.Conn
	)
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure enqueue and job throughput and latency",
		Long: `Bench runs producers that enqueue as fast as the server accepts and workers
that fetch (long-poll) and ack one job per call (or, with --fetch-batch and
--ack-batch, up to N jobs per call through fetch/batch and ack/batch), then
reports enqueue/s, completed jobs/s, and latency percentiles of enqueue calls and of
enqueue→delivery. At most --max-outstanding jobs are enqueued but not yet
fetched at any time. --latency sends one job at a time to idle workers to
measure pickup latency.

Through a gateway (API key), e.g. against ` + "`jobbie dev`" + `:
  jobbie bench --url http://127.0.0.1:8080 --key-file jobbie-data/owner.key --duration 30s

--rate N paces the producers at N jobs/s in all (default: flat out).

--transport stream runs the workers on WorkerService.Work streams to the
gateway's gRPC port instead (one per worker, --fetch-batch jobs of credit
each, every frame of jobs acked in one frame):
  jobbie bench --url http://127.0.0.1:8080 --key-file jobbie-data/owner.key \
    --transport stream --grpc-url http://127.0.0.1:9090 --workers 4 --fetch-batch 100 --batch 100

--push measures push delivery instead of workers: the bench serves an HTTPS
receiver on 127.0.0.1 (keep-alive, verifying every signature with the
namespace's signing keys), makes --queue a push queue to it (max_in_flight
--push-in-flight), enqueues, and reports completed jobs/s (by the queue's
counts) and enqueue→handler latency; at the end push is taken off the
queue. The receiver's certificate is --push-cert and --push-key; the first
run writes a new self-signed pair there and stops, so the server can be
started trusting it:
  jobbie bench --push                 # writes jobbie-bench-receiver.crt and .key
  jobbie dev --push-allow-private --push-ca-file jobbie-bench-receiver.crt
  jobbie bench --push --url http://127.0.0.1:8080 --key-file jobbie-data/owner.key --rate 1000

Straight to a shard, bypassing the gateway, with an operator certificate:
  jobbie bench --direct https://127.0.0.1:8082 --tls-cert jobbie-data/pki/operator.crt \
    --tls-key jobbie-data/pki/operator.key --tls-ca jobbie-data/pki/ca.crt \
    --shard-namespace <tenant id>/default`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := loadBenchCredentials(&cfg, api, direct); err != nil {
				return err
			}
			if outFmt != "text" && outFmt != "json" {
				return fmt.Errorf("--output must be text or json, not %q", outFmt)
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return runBench(ctx, cfg, outFmt, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	f := cmd.Flags()
	api = cli.GatewayFlags(cmd) // --url, --key, --key-file, --namespace, as the CLI's
	f.StringVar(&cfg.DirectURL, "direct", "", "shard URL: send the load straight to this shard")
	f.StringVar(&cfg.ShardNamespace, "shard-namespace", "", "<tenant id>/<namespace> on the shard (with --direct)")
	direct.flags(f) // with --direct: an operator certificate
	f.IntVar(&cfg.Producers, "producers", 0, "concurrent enqueue loops (default 4; 1 with --latency)")
	f.IntVar(&cfg.Workers, "workers", 0, "concurrent fetch/ack loops (default 16; 4 with --latency)")
	f.IntVar(&cfg.Batch, "batch", 1, "jobs per enqueue call (1 uses the single enqueue endpoint)")
	f.IntVar(&cfg.FetchBatch, "fetch-batch", 1, "most jobs per fetch call (1 uses the single fetch endpoint, more fetch/batch)")
	f.IntVar(&cfg.AckBatch, "ack-batch", 1, "most jobs per ack call (1 uses the single ack endpoint, more ack/batch)")
	f.DurationVar(&cfg.Duration, "duration", 0, "how long to run (default 10s unless --jobs is set)")
	f.Int64Var(&cfg.Jobs, "jobs", 0, "stop once this many jobs completed (0: no limit)")
	f.StringVar(&cfg.Queue, "queue", "bench", "queue to use")
	f.IntVar(&cfg.PayloadSize, "payload-size", 64, "bytes of JSON payload per job")
	f.DurationVar(&cfg.FetchTimeout, "fetch-timeout", 0, "long-poll wait of one fetch (default 1s)")
	f.Int64Var(&cfg.MaxOutstanding, "max-outstanding", 10_000, "most jobs enqueued but not yet fetched")
	f.BoolVar(&cfg.Latency, "latency", false, "latency mode: one job at a time to idle workers")
	f.Float64Var(&cfg.Rate, "rate", 0, "enqueue at most this many jobs/s in all, evenly spaced (0: flat out)")
	f.BoolVar(&cfg.Push, "push", false, "push mode: the server delivers the jobs to an HTTPS receiver the bench serves (no workers)")
	f.StringVar(&cfg.PushCert, "push-cert", "jobbie-bench-receiver.crt", "push mode: the receiver's certificate (written with its key, self-signed, when neither exists)")
	f.StringVar(&cfg.PushKey, "push-key", "jobbie-bench-receiver.key", "push mode: the receiver's key")
	f.IntVar(&cfg.PushInFlight, "push-in-flight", 32, "push mode: the queue's max_in_flight")
	f.StringVar(&cfg.Transport, "transport", bench.TransportFast, "HTTP client of the load generator: fasthttp or nethttp; or stream: workers on WorkerService.Work streams to --grpc-url (credit --fetch-batch each)")
	f.StringVar(&cfg.GRPCURL, "grpc-url", "", "the gateway's gRPC address for --transport stream, e.g. http://127.0.0.1:9090")
	f.StringVarP(&outFmt, "output", "o", "text", "report format: text or json (progress then goes to stderr)")
	return cmd
}

// runBench runs the bench and writes the report: as text on stdout, or as
// JSON on stdout with progress and the text report on stderr.
func runBench(ctx context.Context, cfg bench.Config, outFmt string, stdout, stderr io.Writer) error {
	progress := stdout
	if outFmt == "json" {
		progress = stderr
	}
	rep, err := bench.Run(ctx, cfg, progress)
	if rep != nil && outFmt == "json" {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if encErr := enc.Encode(rep); encErr != nil {
			return errors.Join(err, encErr)
		}
	}
	return err
}

// loadBenchCredentials fills the gateway's URL, API key and namespace as
// the CLI reads them, and with --direct the operator certificate.
func loadBenchCredentials(cfg *bench.Config, api *cli.Conn, direct roleTLS) error {
	var err error
	if cfg.URL, cfg.Key, cfg.Namespace, err = api.Target(); err != nil {
		return err
	}
	if cfg.DirectURL == "" {
		return nil
	}
	creds, err := direct.load(pki.RoleOperator)
	if err != nil {
		return fmt.Errorf("--direct: %w", err)
	}
	cfg.TLS = creds.Client(pki.Roles(pki.RoleShard))
	return nil
}

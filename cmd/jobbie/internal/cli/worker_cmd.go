package cli

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/cmd/jobbie/internal/rolelog"
	"github.com/jobbie/jobbie/cmd/jobbie/internal/settings"
	"github.com/jobbie/jobbie/tenancy"
)

// workerCmd is `jobbie worker -- <command>`: the Go SDK's worker, running
// a command per job (subproc.go).
func workerCmd() *cobra.Command {
	var (
		queues                []string
		concurrency           int
		timeout, grace, every time.Duration
		logOpts               rolelog.Options
	)
	cmd := &cobra.Command{
		Use:   "worker --queue <queue> [flags] -- <command> [args...]",
		Short: "Work jobs with any program: run a command for each job",
		Long: `worker fetches jobs from the queues and runs the command for each, in its own
process group: the payload on its stdin, the job in $JOBBIE_JOB ($JOBBIE_JOB_ID,
$JOBBIE_QUEUE, $JOBBIE_ATTEMPT too). Exit 0 acks the job with stdout as its
result (JSON, or else a string); another exit fails it with the end of stderr
as the error, and exit 75 fails it for good (dead, non_retryable). Lines of
JSON on file descriptor 3 report progress ({"progress": {"current": 3,
"total": 10, "message": "..."}}) and store checkpoints ({"checkpoint": ...}).
A job the server cancels, or one past --timeout, has its process group sent
SIGTERM, then SIGKILL. SIGTERM or Ctrl-C drains: no new jobs, up to
--shutdown-grace for the running ones, then the rest are killed and failed
so they retry elsewhere. See docs/cli.md, "Subprocess worker".`,
		Example: `  jobbie worker --queue emails.send --concurrency 4 -- ./send-email.sh
  jobbie worker --queue reports --timeout 10m -- python3 report.py --fast`,
	}
	f := cmd.Flags()
	f.StringArrayVarP(&queues, "queue", "q", nil, "a queue to work (repeat for more, in priority order)")
	f.IntVarP(&concurrency, "concurrency", "c", 1, "how many jobs (children) run at once")
	f.DurationVar(&timeout, "timeout", 0, "kill a child that runs longer and fail its attempt (0: no limit)")
	f.DurationVar(&grace, "shutdown-grace", 30*time.Second, "on SIGTERM, how long running children may take before they are killed and failed")
	// Half a second, so a cancel reaches the command within about a
	// second; a heartbeat is one call for all the worker's running jobs,
	// and none is sent while it runs none.
	f.DurationVar(&every, "heartbeat", 500*time.Millisecond, "how often heartbeats extend leases, report progress and learn of cancels (or a third of the lease if shorter)")
	settings.Range(f, "concurrency", "1", "")
	for _, name := range []string{"timeout", "shutdown-grace", "heartbeat"} {
		settings.Range(f, name, "0s", "")
	}
	logOpts.Flags(f, "info")
	conn := newConn(gatewayAPI, f)
	conn.output = OutTable
	cmd.Args = func(cmd *cobra.Command, args []string) error {
		if cmd.ArgsLenAtDash() != 0 || len(args) == 0 {
			return errors.New("worker needs the command after --: jobbie worker --queue q -- ./handler args")
		}
		return nil
	}
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		var errs []error
		if len(queues) == 0 {
			errs = append(errs, errors.New("--queue: name at least one queue"))
		}
		for _, q := range queues {
			if err := CheckID("queue", q); err != nil {
				errs = append(errs, fmt.Errorf("--queue: %w", err))
			}
		}
		if _, err := exec.LookPath(args[0]); err != nil {
			errs = append(errs, fmt.Errorf("the command: %w", err))
		}
		if err := errors.Join(errs...); err != nil {
			return err
		}
		c, err := conn.client()
		if err != nil {
			return err
		}
		defer c.CloseIdleConnections()
		stderr := cmd.ErrOrStderr()
		s := &subproc{argv: args, timeout: timeout, stderr: stderr}
		cfg := client.WorkerConfig{Queues: queues, Concurrency: concurrency, ShutdownGrace: grace,
			HeartbeatInterval: every, Logger: logOpts.New(stderr)}
		if grace == 0 {
			// The SDK reads 0 as its default; a worker told 0 waits for nothing.
			cfg.ShutdownGrace = time.Nanosecond
		}
		w := client.NewWorker(c, cfg, s.handle)
		ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		fmt.Fprintf(stderr, "jobbie worker %s: working %v with %d at a time\n", w.ID(), queues, concurrency)
		err = w.Run(ctx)
		s.running.Wait() // every child killed and reaped before the worker exits
		if err != nil {
			return refused(err, tenancy.ActJobWork)
		}
		fmt.Fprintf(stderr, "jobbie worker %s: stopped\n", w.ID())
		return nil
	}
	settings.Install(cmd, "worker")
	return cmd
}

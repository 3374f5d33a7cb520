package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/tenancy"
)

// The job commands: `jobbie enqueue`, `inspect`, `retry`, `cancel`,
// `move`, `delete` and `dead`, each one request to the gateway.

func jobCmds() []*cobra.Command {
	return []*cobra.Command{enqueueCmd(), inspectCmd(), retryCmd(), cancelCmd(), moveCmd(), deleteJobCmd(), deadCmd()}
}

// enqueueFlags are the flags of `jobbie enqueue` that need checking or
// converting before they go into the request.
type enqueueFlags struct {
	priority, backoff                string
	delay, uniquePeriod, expireAfter time.Duration
	runAt                            *time.Time
	maxRetries                       *int
	dependsOn                        []string
}

func enqueueCmd() *cobra.Command {
	var (
		req client.EnqueueRequest
		fl  enqueueFlags
	)
	cmd := &cobra.Command{
		Use:   "enqueue <queue> [<payload-json> | -]",
		Short: "Enqueue a job",
		Long: `enqueue adds one job to a queue. The payload is JSON, given as the second
argument or, with -, read from stdin; without one the job has none.

  jobbie enqueue emails.send '{"to":"user@example.com"}'
  jobbie enqueue reports - --priority high --delay 10m < report.json
  jobbie enqueue billing '{"invoice":42}' --unique-key invoice-42 --tag tenant=acme
  jobbie enqueue emails.send '{}' -o json | jq -r .job_id`,
		Args: argsBetween(1, 2),
	}
	api := addConn(cmd, gatewayAPI)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		req.Queue = args[0]
		if err := tenancy.ValidateQueue(req.Queue); err != nil {
			return err
		}
		if len(args) == 2 {
			payload, err := readPayload(args[1], cmd.InOrStdin())
			if err != nil {
				return err
			}
			req.Payload = payload
		}
		if err := fl.apply(&req, time.Now()); err != nil {
			return err
		}
		return runAPI(cmd, api, "enqueue", tenancy.ActJobEnqueue,
			func(ctx context.Context, c *client.Client) (*client.EnqueueResult, error) { return c.Enqueue(ctx, req) },
			func(w io.Writer, r *client.EnqueueResult) error {
				if r.UniqueExisting {
					_, err := fmt.Fprintf(w, "%s already holds unique key %q (%s): nothing enqueued\n", r.JobID, req.UniqueKey, r.Status)
					return err
				}
				_, err := fmt.Fprintf(w, "%s enqueued on %s (%s)\n", r.JobID, req.Queue, r.Status)
				return err
			})
	}
	f := cmd.Flags()
	f.StringVar(&fl.priority, "priority", "", "critical, high or normal (default: normal)")
	f.DurationVar(&fl.delay, "delay", 0, "run the job this long from now, e.g. 10m")
	f.Var(timeValue{&fl.runAt}, "run-at", "run the job at this time (RFC 3339 or a date)")
	f.Var(intPtrValue{&fl.maxRetries}, "max-retries", "retries after the first attempt (0: never retry; default: the queue's or server's)")
	f.StringVar(&fl.backoff, "retry-backoff", "", "none, fixed, linear or exponential")
	f.StringVar(&req.UniqueKey, "unique-key", "", "enqueue nothing while a job with this key exists")
	f.DurationVar(&fl.uniquePeriod, "unique-period", 0, "how long the unique key holds, in whole seconds (default: the server's)")
	f.DurationVar(&fl.expireAfter, "expire-after", 0, "drop the job if it has not started within this long")
	f.Var(tagsValue{&req.Tags}, "tag", "tag `key=value`; repeat for several")
	f.StringVar(&req.ConcurrencyKey, "concurrency-key", "", "count the job against its queue's per-key concurrency")
	f.StringVar(&req.FairnessKey, "fairness-key", "", "take the queue's fairness keys in turn")
	f.StringSliceVar(&fl.dependsOn, "depends-on", nil, "hold the job until these jobs completed; repeat or comma-separate")
	return cmd
}

// apply checks the flags and sets them on req; now is when --delay counts from.
func (fl *enqueueFlags) apply(req *client.EnqueueRequest, now time.Time) error {
	switch fl.priority {
	case "", client.PriorityCritical, client.PriorityHigh, client.PriorityNormal:
		req.Priority = fl.priority
	default:
		return fmt.Errorf("--priority must be critical, high or normal, not %q", fl.priority)
	}
	switch fl.backoff {
	case "", client.BackoffNone, client.BackoffFixed, client.BackoffLinear, client.BackoffExponential:
		req.RetryBackoff = fl.backoff
	default:
		return fmt.Errorf("--retry-backoff must be none, fixed, linear or exponential, not %q", fl.backoff)
	}
	switch {
	case fl.delay < 0:
		return errors.New("--delay must not be negative")
	case fl.delay > 0 && fl.runAt != nil:
		return errors.New("give --delay or --run-at, not both")
	case fl.delay > 0:
		req.ScheduledAt = now.Add(fl.delay)
	case fl.runAt != nil:
		req.ScheduledAt = *fl.runAt
	}
	if fl.maxRetries != nil && *fl.maxRetries < 0 {
		return errors.New("--max-retries must not be negative")
	}
	req.MaxRetries = fl.maxRetries
	if fl.uniquePeriod < 0 || fl.expireAfter < 0 {
		return errors.New("--unique-period and --expire-after must not be negative")
	}
	if fl.uniquePeriod > 0 && req.UniqueKey == "" {
		return errors.New("--unique-period needs --unique-key")
	}
	req.UniquePeriod, req.ExpireAfter = fl.uniquePeriod, fl.expireAfter
	for _, id := range fl.dependsOn {
		if err := CheckID("--depends-on job", id); err != nil {
			return err
		}
	}
	req.DependsOn = fl.dependsOn
	return nil
}

// readPayload is the payload argument, or stdin for "-", checked to be
// one JSON value.
func readPayload(arg string, stdin io.Reader) (json.RawMessage, error) {
	from, raw := "the payload", []byte(arg)
	if arg == "-" {
		if isCharDevice(stdin) {
			return nil, errors.New("payload -: pipe the JSON payload into stdin")
		}
		var err error
		if raw, err = io.ReadAll(stdin); err != nil {
			return nil, fmt.Errorf("stdin: %w", err)
		}
		from = "the payload on stdin"
	}
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return nil, fmt.Errorf("%s is empty: give a JSON value, e.g. '{}'", from)
	}
	if !json.Valid(raw) {
		var v any
		err := json.Unmarshal(raw, &v)
		return nil, fmt.Errorf("%s is not JSON: %v", from, err)
	}
	return raw, nil
}

func inspectCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "inspect <job-id>",
		Short: "Show a job: its state, attempts and errors, timeline, progress and result",
		Args:  exactArgs(1),
	}
	api := addConn(cmd, gatewayAPI)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		id := args[0]
		if err := CheckID("job", id); err != nil {
			return err
		}
		c, err := api.client()
		if err != nil {
			return err
		}
		defer c.CloseIdleConnections()
		d, err := c.GetJob(cmd.Context(), id)
		if err != nil {
			return fmt.Errorf("job %s: %w", id, refused(err, tenancy.ActJobRead))
		}
		if api.json() {
			return writeJSON(cmd.OutOrStdout(), jobDetailJSON(d))
		}
		return printJobDetail(cmd.OutOrStdout(), d)
	}
	return cmd
}

// JobOp is the outcome of retry, cancel, move and delete as --output json
// prints it.
type JobOp struct {
	JobID   string `json:"job_id"`
	Status  string `json:"status"`
	Queue   string `json:"queue,omitempty"`
	Deleted bool   `json:"deleted,omitempty"`
}

// jobOpCmd is a command that acts on one job and reports its state.
func jobOpCmd(use, short string, nargs int, act func(context.Context, *client.Client, []string) (JobOp, error),
	line func(JobOp) string) *cobra.Command {
	cmd := &cobra.Command{Use: use, Short: short, Args: exactArgs(nargs)}
	api := addConn(cmd, gatewayAPI)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if err := CheckID("job", args[0]); err != nil {
			return err
		}
		if nargs == 2 {
			if err := tenancy.ValidateQueue(args[1]); err != nil {
				return err
			}
		}
		return runAPI(cmd, api, "job "+args[0], tenancy.ActJobManage,
			func(ctx context.Context, c *client.Client) (JobOp, error) { return act(ctx, c, args) },
			func(w io.Writer, op JobOp) error { _, err := fmt.Fprintln(w, line(op)); return err })
	}
	return cmd
}

func retryCmd() *cobra.Command {
	return jobOpCmd("retry <job-id>", "Retry a dead, cancelled or completed job (attempts reset, errors kept)", 1,
		func(ctx context.Context, c *client.Client, args []string) (JobOp, error) {
			r, err := c.RetryJob(ctx, args[0])
			if err != nil {
				return JobOp{}, err
			}
			return JobOp{JobID: r.JobID, Status: r.Status, Queue: r.Queue}, nil
		},
		func(op JobOp) string { return op.JobID + " retried: " + op.Status })
}

func cancelCmd() *cobra.Command {
	return jobOpCmd("cancel <job-id>", "Cancel a waiting job, or ask a running one's worker to stop", 1,
		func(ctx context.Context, c *client.Client, args []string) (JobOp, error) {
			st, err := c.CancelJob(ctx, args[0])
			return JobOp{JobID: args[0], Status: st}, err
		},
		func(op JobOp) string {
			if op.Status == client.CancelRequesting {
				return op.JobID + " is running: cancel requested, its worker is told by its next heartbeat"
			}
			return op.JobID + " " + op.Status
		})
}

func moveCmd() *cobra.Command {
	return jobOpCmd("move <job-id> <queue>", "Move a job that is not running to another queue", 2,
		func(ctx context.Context, c *client.Client, args []string) (JobOp, error) {
			r, err := c.MoveJob(ctx, args[0], args[1])
			if err != nil {
				return JobOp{}, err
			}
			q := r.Queue
			if q == "" {
				q = args[1]
			}
			return JobOp{JobID: r.JobID, Status: r.Status, Queue: q}, nil
		},
		func(op JobOp) string { return op.JobID + " moved to " + op.Queue + ": " + op.Status })
}

func deleteJobCmd() *cobra.Command {
	return jobOpCmd("delete <job-id>", "Delete a job that is not running (cancel a running one first)", 1,
		func(ctx context.Context, c *client.Client, args []string) (JobOp, error) {
			err := c.DeleteJob(ctx, args[0])
			return JobOp{JobID: args[0], Status: "deleted", Deleted: err == nil}, err
		},
		func(op JobOp) string { return op.JobID + " deleted" })
}

func deadCmd() *cobra.Command {
	var (
		queue string
		limit int
	)
	cmd := &cobra.Command{
		Use:   "dead",
		Short: "List dead jobs, newest first",
		Long: `dead lists the namespace's dead jobs (of --queue only, when given), newest
first, following the server's pages up to --limit. Retry one with
` + "`jobbie retry <job-id>`" + `, or many with ` + "`jobbie search --state dead | jobbie bulk retry`" + `.`,
		Args: cobra.NoArgs,
	}
	api := addConn(cmd, gatewayAPI)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if queue != "" {
			if err := tenancy.ValidateQueue(queue); err != nil {
				return err
			}
		}
		if limit < 0 {
			return errors.New("--limit must not be negative")
		}
		return runAPI(cmd, api, "dead", tenancy.ActJobRead,
			func(ctx context.Context, c *client.Client) ([]client.DeadJob, error) {
				return listDead(ctx, c, queue, limit)
			},
			printDead)
	}
	cmd.Flags().StringVar(&queue, "queue", "", "only this queue's dead jobs")
	cmd.Flags().IntVar(&limit, "limit", 100, "most jobs to list (0: all)")
	return cmd
}

// deadPage is the most dead jobs one request asks for.
const deadPage = 1000

func listDead(ctx context.Context, c *client.Client, queue string, limit int) ([]client.DeadJob, error) {
	out := []client.DeadJob{}
	q := client.DeadQuery{Queue: queue}
	for {
		q.Limit = deadPage
		if limit > 0 {
			q.Limit = min(deadPage, limit-len(out))
		}
		page, err := c.ListDead(ctx, q)
		if err != nil {
			return nil, err
		}
		out = append(out, page.Jobs...)
		if !page.HasMore || page.Cursor == nil || limit > 0 && len(out) >= limit {
			return out, nil
		}
		q.Cursor = *page.Cursor
	}
}

func printDead(w io.Writer, jobs []client.DeadJob) error {
	tw := newTable(w)
	fmt.Fprintln(tw, "ID\tQUEUE\tATTEMPT\tREASON\tDIED\tLAST ERROR")
	for _, j := range jobs {
		last := ""
		if j.LastError != nil {
			last = *j.LastError
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\n", j.ID, j.Queue, j.Attempt, orDash(j.DeadReason), stamp(j.DiedAt),
			orDash(oneLine(last, 80)))
	}
	return tw.Flush()
}

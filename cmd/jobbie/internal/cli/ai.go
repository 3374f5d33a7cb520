package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// `jobbie ai usage` and `jobbie held`: the namespace's model usage and
// the jobs an AI budget holds (docs/api/ai.md), through the SDK.

func aiCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "ai", Short: "AI workloads: the model usage workers reported", Args: cobra.NoArgs}
	var q client.AIUsageQuery
	var from, to *time.Time
	usage := &cobra.Command{
		Use:   "usage",
		Short: "Show the namespace's model usage and cost per queue, model, tag or in all",
		Long: `usage sums the model usage workers reported on ack, fail and heartbeat
over whole UTC hours, per group.

  jobbie ai usage                                  # the last 24 hours, the namespace's total
  jobbie ai usage --group-by model
  jobbie ai usage --group-by tag --from 2026-11-05 --to 2026-11-06
  jobbie ai usage --step 1d --from 2026-11-01      # a row per UTC day, then the totals
  jobbie ai usage -o json                          # GET /api/v1/ai/usage as it answers

It needs usage.read.`,
		Args: cobra.NoArgs,
	}
	api := addConn(usage, gatewayAPI)
	usage.RunE = func(cmd *cobra.Command, _ []string) error {
		if from != nil {
			q.From = *from
		}
		if to != nil {
			q.To = *to
		}
		return runAPI(cmd, api, "ai usage", tenancy.ActUsageRead,
			func(ctx context.Context, c *client.Client) (*client.AIUsageResponse, error) {
				return c.GetAIUsage(ctx, q)
			}, printAIUsage)
	}
	f := usage.Flags()
	f.Var(timeValue{&from}, "from", "start of the range (default: 24 hours before --to)")
	f.Var(timeValue{&to}, "to", "end of the range (default: now)")
	f.StringVar(&q.GroupBy, "group-by", "", "queue, model, tag or namespace (default namespace)")
	f.StringVar(&q.Step, "step", "", "a row per step: whole hours or days, such as 1h, 6h or 1d")
	cmd.AddCommand(usage)
	return cmd
}

func printAIUsage(w io.Writer, u *client.AIUsageResponse) error {
	tw := newTable(w)
	if u.Step == "" {
		fmt.Fprintf(tw, "%s\tREPORTS\tINPUT\tOUTPUT\tCACHE READ\tCACHE WRITE\tCOST USD\n", upper(u.GroupBy))
		for _, g := range u.Groups {
			fmt.Fprintln(tw, aiUsageRow(g))
		}
		fmt.Fprintf(tw, "(%s to %s, UTC hours)\n", u.From.Format(time.RFC3339), u.To.Format(time.RFC3339))
		return tw.Flush()
	}
	// By step: a row per bucket and group (one of zeros for a bucket
	// without reports), then the totals.
	fmt.Fprintf(tw, "START\t%s\tREPORTS\tINPUT\tOUTPUT\tCACHE READ\tCACHE WRITE\tCOST USD\n", upper(u.GroupBy))
	for _, b := range u.Buckets {
		start := b.Start.UTC().Format(time.RFC3339)
		if len(b.Groups) == 0 {
			fmt.Fprintf(tw, "%s\t-\t0\t0\t0\t0\t0\t0\n", start)
		}
		for _, g := range b.Groups {
			fmt.Fprintf(tw, "%s\t%s\n", start, aiUsageRow(g))
		}
	}
	for _, g := range u.Groups {
		fmt.Fprintf(tw, "total\t%s\n", aiUsageRow(g))
	}
	fmt.Fprintf(tw, "(%s to %s, UTC, steps of %s)\n", u.From.Format(time.RFC3339), u.To.Format(time.RFC3339), u.Step)
	return tw.Flush()
}

// aiUsageRow is a group's cells: its key, counts and cost.
func aiUsageRow(g wire.AIUsageGroup) string {
	return fmt.Sprintf("%s\t%d\t%d\t%d\t%d\t%d\t%s", orDash(g.Key), g.Reports, g.InputTokens, g.OutputTokens, g.CacheReadTokens, g.CacheWriteTokens, g.CostUSD)
}

func upper(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'a' && c <= 'z' {
			b[i] = c - 'a' + 'A'
		}
	}
	return string(b)
}

func heldCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "held",
		Short: "List the jobs an AI budget holds, approve or reject them",
		Long: `held lists the namespace's jobs an AI budget holds (held_reason budget):
once what a budget's scope reported today reaches its limit, new jobs of
its scope are held until approved (they run, outside the budget) or
rejected (cancelled).

  jobbie held list
  jobbie held list --budget llm-daily
  jobbie held approve job_01J...
  jobbie held reject job_01J... job_01J...
  jobbie held approve --budget llm-daily          # every job that budget holds
  jobbie held reject --all --filter '{"queue":"llm"}'

With --budget, --all or --filter, approve and reject are one bulk
operation over the held jobs the filter selects (held_reason budget is
added to it); over 10,000 jobs it runs in the background and its
progress is followed (unless --no-wait). Listing needs job.read,
approving and rejecting job.manage.`,
		Args: cobra.NoArgs,
	}
	api := addConn(cmd, gatewayAPI)
	var (
		limit  int
		budget string
	)
	list := func(cmd *cobra.Command, _ []string) error {
		return runAPI(cmd, api, "held jobs", tenancy.ActJobRead,
			func(ctx context.Context, c *client.Client) ([]client.SearchJob, error) {
				return heldJobs(ctx, c, budget, limit)
			}, printHeld)
	}
	cmd.RunE = list
	lc := &cobra.Command{Use: "list", Short: "List the jobs a budget holds, oldest first", Args: cobra.NoArgs, RunE: list}
	for _, fs := range []*cobra.Command{cmd, lc} {
		fs.Flags().IntVar(&limit, "limit", 100, "list at most this many held jobs")
		fs.Flags().StringVar(&budget, "budget", "", "only the jobs this budget holds")
	}
	cmd.AddCommand(lc,
		heldDecideCmd(api, "approve", client.BulkApprove, "Run held jobs, outside their budget", (*client.Client).ApproveJob),
		heldDecideCmd(api, "reject", client.BulkReject, "Cancel held jobs", (*client.Client).RejectJob))
	return cmd
}

// heldDecideCmd is `jobbie held approve|reject`: the jobs named, one
// call each, or a bulk over the held jobs a filter selects.
func heldDecideCmd(api *Conn, use, action, short string, call func(*client.Client, context.Context, string) (*client.ApproveResponse, error)) *cobra.Command {
	var (
		filter, budget string
		all, noWait    bool
	)
	cmd := &cobra.Command{Use: use + " [<job id>...]", Short: short, Args: cobra.ArbitraryArgs}
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		byFilter := filter != "" || budget != "" || all
		switch {
		case byFilter && len(args) > 0:
			return errors.New("name job ids or select them with --budget, --all or --filter, not both")
		case !byFilter && len(args) == 0:
			return errors.New("name the held jobs, or select them with --budget, --all or --filter")
		case byFilter:
			f, err := heldFilter(filter, budget)
			if err != nil {
				return err
			}
			c, err := api.client()
			if err != nil {
				return err
			}
			defer c.CloseIdleConnections()
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			b := &bulkRun{c: c, base: client.BulkRequest{Action: action, Filter: f}, noWait: noWait, json: api.json(),
				stdout: cmd.OutOrStdout(), stderr: cmd.ErrOrStderr()}
			return b.run(ctx, nil)
		}
		return runAPI(cmd, api, use, tenancy.ActJobManage,
			func(ctx context.Context, c *client.Client) ([]client.ApproveResponse, error) {
				var out []client.ApproveResponse
				for _, id := range args {
					r, err := call(c, ctx, id)
					if err != nil {
						return out, fmt.Errorf("%s: %w", id, err)
					}
					out = append(out, *r)
				}
				return out, nil
			},
			func(w io.Writer, rs []client.ApproveResponse) error {
				for _, r := range rs {
					if _, err := fmt.Fprintf(w, "%s %s\n", r.JobID, r.Status); err != nil {
						return err
					}
				}
				return nil
			})
	}
	f := cmd.Flags()
	f.StringVar(&budget, "budget", "", "every job this budget holds")
	f.BoolVar(&all, "all", false, "every job a budget holds (narrowed by --filter, if given)")
	f.StringVar(&filter, "filter", "", "the held jobs this JSON search filter selects")
	f.BoolVar(&noWait, "no-wait", false, "print a background operation's id and return instead of following it")
	return cmd
}

// heldFilter is the filter of a bulk approve or reject: --filter's, if
// any, narrowed to the jobs a budget holds (--budget: that budget).
func heldFilter(filter, budget string) (*client.SearchFilter, error) {
	f := &client.SearchFilter{}
	if filter != "" {
		var err error
		if f, err = parseFilter(filter); err != nil {
			return nil, err
		}
	}
	if budget != "" {
		if f.HeldBudget != "" && f.HeldBudget != budget {
			return nil, fmt.Errorf("--budget %q and --filter's held_budget %q differ", budget, f.HeldBudget)
		}
		f.HeldBudget = budget
	}
	if f.HeldReason == "" {
		f.HeldReason = wire.HeldReasonBudget
	}
	return f, nil
}

// heldJobs is the oldest limit jobs a budget holds (budget's alone when
// set), as search finds them by held_reason.
func heldJobs(ctx context.Context, c *client.Client, budget string, limit int) ([]client.SearchJob, error) {
	var out []client.SearchJob
	req := client.SearchRequest{SearchFilter: client.SearchFilter{HeldReason: wire.HeldReasonBudget, HeldBudget: budget},
		Order: wire.OrderAsc}
	for j, err := range c.SearchAll(ctx, req) {
		if err != nil {
			return nil, err
		}
		if len(out) == limit {
			break
		}
		out = append(out, j)
	}
	return out, nil
}

func printHeld(w io.Writer, js []client.SearchJob) error {
	tw := newTable(w)
	fmt.Fprintln(tw, "JOB\tQUEUE\tBUDGET\tCREATED")
	for _, j := range js {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", j.ID, j.Queue, j.HeldBudget, j.CreatedAt.UTC().Format(time.RFC3339))
	}
	return tw.Flush()
}

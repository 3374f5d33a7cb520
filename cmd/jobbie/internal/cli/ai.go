package cli

import (
	"context"
	"fmt"
	"io"
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
	cmd.AddCommand(usage)
	return cmd
}

func printAIUsage(w io.Writer, u *client.AIUsageResponse) error {
	tw := newTable(w)
	fmt.Fprintf(tw, "%s\tREPORTS\tINPUT\tOUTPUT\tCACHE READ\tCACHE WRITE\tCOST USD\n", upper(u.GroupBy))
	for _, g := range u.Groups {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%s\n", orDash(g.Key), g.Reports, g.InputTokens, g.OutputTokens, g.CacheReadTokens, g.CacheWriteTokens, g.CostUSD)
	}
	fmt.Fprintf(tw, "(%s to %s, UTC hours)\n", u.From.Format(time.RFC3339), u.To.Format(time.RFC3339))
	return tw.Flush()
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
  jobbie held approve job_01J...
  jobbie held reject job_01J... job_01J...

Listing needs job.read, approving and rejecting job.manage.`,
		Args: cobra.NoArgs,
	}
	api := addConn(cmd, gatewayAPI)
	var limit int
	list := func(cmd *cobra.Command, _ []string) error {
		return runAPI(cmd, api, "held jobs", tenancy.ActJobRead,
			func(ctx context.Context, c *client.Client) ([]*client.JobDetail, error) {
				return heldJobs(ctx, c, limit)
			}, printHeld)
	}
	cmd.RunE = list
	lc := &cobra.Command{Use: "list", Short: "List the jobs a budget holds, oldest first", Args: cobra.NoArgs, RunE: list}
	lc.Flags().IntVar(&limit, "limit", 100, "at most this many held jobs are looked at")
	cmd.Flags().IntVar(&limit, "limit", 100, "at most this many held jobs are looked at")
	decide := func(use, short string, call func(*client.Client, context.Context, string) (*client.ApproveResponse, error)) *cobra.Command {
		return &cobra.Command{Use: use + " <job id>...", Short: short, Args: cobra.MinimumNArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
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
			}}
	}
	cmd.AddCommand(lc,
		decide("approve", "Run held jobs, outside their budget", (*client.Client).ApproveJob),
		decide("reject", "Cancel held jobs", (*client.Client).RejectJob))
	return cmd
}

// heldJobs is the jobs a budget holds among the oldest limit held jobs
// (a job held for its dependencies is not one).
func heldJobs(ctx context.Context, c *client.Client, limit int) ([]*client.JobDetail, error) {
	var out []*client.JobDetail
	seen := 0
	req := client.SearchRequest{SearchFilter: client.SearchFilter{State: []string{wire.StateHeld}}, Order: wire.OrderAsc}
	for j, err := range c.SearchAll(ctx, req) {
		if err != nil {
			return nil, err
		}
		if seen++; seen > limit {
			break
		}
		d, err := c.GetJob(ctx, j.ID)
		if err != nil {
			if client.IsNotFound(err) {
				continue // gone meanwhile
			}
			return nil, err
		}
		if d.HeldReason == wire.HeldReasonBudget {
			out = append(out, d)
		}
	}
	return out, nil
}

func printHeld(w io.Writer, js []*client.JobDetail) error {
	tw := newTable(w)
	fmt.Fprintln(tw, "JOB\tQUEUE\tBUDGET\tCREATED")
	for _, j := range js {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", j.ID, j.Queue, j.HeldBudget, j.CreatedAt.UTC().Format(time.RFC3339))
	}
	return tw.Flush()
}

package cli

import (
	"context"
	"fmt"
	"io"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// `jobbie alerts`: the namespace's alert rules and their state
// (docs/api/alerts.md), through the SDK's alert calls.

// alertFlags are a rule's settings for create and update.
type alertFlags struct {
	kind, queue, dur string
	threshold        float64
	minCount         int
	disabled         bool
}

func alertsCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "alerts",
		Short: "List, create, change or delete alert rules, and see what fires",
		Long: `alerts lists the namespace's alert rules and their state. A rule fires on a
queue when its condition holds, and resolves when it no longer does; both
are the webhook events alert.firing and alert.resolved.

  jobbie alerts create backlog --kind queue_depth_above --queue emails --threshold 1000 --for 5m
  jobbie alerts create stuck --kind oldest_pending_above --queue emails --for 10m
  jobbie alerts create dying --kind dead_increase --threshold 5 --for 15m          (every queue)
  jobbie alerts create flaky --kind failure_rate_above --queue emails --threshold 20 --for 10m --min-count 50
  jobbie alerts create idle --kind no_worker --queue emails --for 2m
  jobbie alerts get backlog
  jobbie alerts update backlog --kind queue_depth_above --queue emails --threshold 5000 --for 5m
  jobbie alerts delete backlog

Reading needs namespace.read, changing queue.manage, with a key whose
role covers every queue of the namespace.`,
		Args: cobra.NoArgs,
	}
	api := addConn(cmd, gatewayAPI)
	list := func(cmd *cobra.Command, _ []string) error {
		return runAPI(cmd, api, "alerts", tenancy.ActNamespaceRead,
			func(ctx context.Context, c *client.Client) ([]wire.AlertRule, error) {
				return c.ListAlertRules(ctx)
			}, printAlerts)
	}
	cmd.RunE = list
	get := &cobra.Command{Use: "get <name>", Short: "Show a rule, the queues it fires on and its last values", Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return alertRun(cmd, api, args[0], tenancy.ActNamespaceRead, func(ctx context.Context, c *client.Client) (*wire.AlertRule, error) {
				return c.GetAlertRule(ctx, args[0])
			})
		}}
	del := &cobra.Command{Use: "delete <name>", Short: "Delete a rule; each queue it fires on resolves", Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := args[0]
			if err := tenancy.ValidateAlertName(name); err != nil {
				return err
			}
			return runAPI(cmd, api, "alert "+name, tenancy.ActQueueManage,
				func(ctx context.Context, c *client.Client) (deleted, error) {
					return deleted{ID: name, Deleted: true}, c.DeleteAlertRule(ctx, name)
				},
				func(w io.Writer, d deleted) error {
					_, err := fmt.Fprintf(w, "alert rule %s deleted\n", d.ID)
					return err
				})
		}}
	cmd.AddCommand(&cobra.Command{Use: "list", Short: "List the namespace's rules", Args: cobra.NoArgs, RunE: list},
		get, alertWriteCmd(api, true), alertWriteCmd(api, false), del)
	return cmd
}

// alertWriteCmd is create (POST) or update (PUT, the whole rule).
func alertWriteCmd(api *Conn, create bool) *cobra.Command {
	var f alertFlags
	use, short := "create <name>", "Add a rule"
	if !create {
		use, short = "update <name>", "Replace a rule's settings (give them all, as on create)"
	}
	cmd := &cobra.Command{Use: use, Short: short, Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			req := wire.AlertRuleRequest{Kind: f.kind, Queue: f.queue, Threshold: f.threshold, For: f.dur, MinCount: f.minCount}
			if create {
				req.Name = args[0]
			}
			if f.disabled {
				req.Enabled = new(false)
			}
			name := args[0]
			return alertRun(cmd, api, name, tenancy.ActQueueManage, func(ctx context.Context, c *client.Client) (*wire.AlertRule, error) {
				if create {
					return c.CreateAlertRule(ctx, req)
				}
				return c.UpdateAlertRule(ctx, name, req)
			})
		}}
	fs := cmd.Flags()
	fs.StringVar(&f.kind, "kind", "", "queue_depth_above, oldest_pending_above, dead_increase, failure_rate_above or no_worker")
	fs.StringVar(&f.queue, "queue", "", "the queue it watches (none: every queue, each on its own)")
	fs.Float64Var(&f.threshold, "threshold", 0, "jobs (queue_depth_above, dead_increase) or a percentage (failure_rate_above)")
	fs.StringVar(&f.dur, "for", "", `how long the condition holds, the age, or the window ("5m")`)
	fs.IntVar(&f.minCount, "min-count", 0, "failure_rate_above: jobs that must have finished within --for (default 10)")
	fs.BoolVar(&f.disabled, "disabled", false, "keep the rule without evaluating it")
	return cmd
}

// alertRun checks the rule's name, makes call and prints the rule it
// answers.
func alertRun(cmd *cobra.Command, api *Conn, name string, act tenancy.Action, call func(context.Context, *client.Client) (*wire.AlertRule, error)) error {
	if err := tenancy.ValidateAlertName(name); err != nil {
		return err
	}
	return runAPI(cmd, api, "alert "+name, act, call, printAlert)
}

func printAlerts(w io.Writer, rs []wire.AlertRule) error {
	tw := newTable(w)
	fmt.Fprintln(tw, "NAME\tKIND\tQUEUE\tTHRESHOLD\tFOR\tENABLED\tSTATE\tSINCE")
	for _, r := range rs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%t\t%s\t%s\n", r.Name, r.Kind, orAll(r.Queue), threshold(&r), r.For, r.Enabled, r.State, stamp(r.Since))
	}
	return tw.Flush()
}

func printAlert(w io.Writer, r *wire.AlertRule) error {
	tw := newTable(w)
	fmt.Fprintf(tw, "ALERT\t%s\nKIND\t%s\nQUEUE\t%s\nTHRESHOLD\t%s\nFOR\t%s\nENABLED\t%t\nSTATE\t%s\n",
		r.Name, r.Kind, orAll(r.Queue), threshold(r), r.For, r.Enabled, r.State)
	if r.MinCount > 0 {
		fmt.Fprintf(tw, "MIN COUNT\t%d\n", r.MinCount)
	}
	for _, f := range r.Firing {
		fmt.Fprintf(tw, "FIRING\t%s since %s (value %g)\n", f.Queue, stamp(&f.Since), f.Value)
	}
	for _, v := range r.Values {
		fmt.Fprintf(tw, "VALUE\t%s %g\n", v.Queue, v.Value)
	}
	fmt.Fprintf(tw, "EVALUATED\t%s\n", stamp(r.EvaluatedAt))
	return tw.Flush()
}

func orAll(queue string) string {
	if queue == "" {
		return "*"
	}
	return queue
}

// threshold is "-" for the kinds measured by --for alone.
func threshold(r *wire.AlertRule) string {
	if r.Kind == wire.AlertOldest || r.Kind == wire.AlertNoWorker {
		return "-"
	}
	return strconv.FormatFloat(r.Threshold, 'f', -1, 64)
}

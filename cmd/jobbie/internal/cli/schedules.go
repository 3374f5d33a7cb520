package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/tenancy"
)

// schedulesCmd is `jobbie schedules`: the namespace's cron schedules,
// listed, shown, enabled, disabled and deleted. A schedule is named by its
// id (sch_…) or its name.
func schedulesCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "schedules",
		Short: "List cron schedules; create, get, update, enable, disable, run or delete one",
		Long: `schedules lists the namespace's cron schedules, oldest first. Its
subcommands take a schedule's id (sch_…) or its name:

  jobbie schedules
  jobbie schedules create --name nightly-report --queue reports --cron '0 2 * * *'
  jobbie schedules update nightly-report --timezone Europe/Paris
  jobbie schedules get nightly-report
  jobbie schedules disable nightly-report
  jobbie schedules run nightly-report     (enqueue its job now, by hand)
  jobbie schedules delete sch_01…`,
		Args: cobra.NoArgs,
	}
	api := addConn(cmd, gatewayAPI)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		return runAPI(cmd, api, "schedules", tenancy.ActScheduleRead,
			func(ctx context.Context, c *client.Client) ([]client.Schedule, error) {
				ss, err := c.ListSchedules(ctx)
				if ss == nil {
					ss = []client.Schedule{}
				}
				return ss, err
			},
			printSchedules)
	}
	one := func(use, short string, act tenancy.Action, call func(*client.Client, context.Context, string) (*client.Schedule, error)) *cobra.Command {
		return &cobra.Command{
			Use: use + " <id-or-name>", Short: short, Args: exactArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				if err := CheckID("schedule", args[0]); err != nil {
					return err
				}
				return runAPI(cmd, api, "schedule "+args[0], act,
					func(ctx context.Context, c *client.Client) (*client.Schedule, error) { return call(c, ctx, args[0]) },
					func(w io.Writer, s *client.Schedule) error { return printSchedules(w, []client.Schedule{*s}) })
			},
		}
	}
	del := &cobra.Command{
		Use: "delete <id-or-name>", Short: "Delete a schedule (jobs it enqueued stay)", Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := CheckID("schedule", args[0]); err != nil {
				return err
			}
			return runAPI(cmd, api, "schedule "+args[0], tenancy.ActScheduleManage,
				func(ctx context.Context, c *client.Client) (deleted, error) {
					return deleted{ID: args[0], Deleted: true}, c.DeleteSchedule(ctx, args[0])
				},
				func(w io.Writer, d deleted) error {
					_, err := fmt.Fprintf(w, "schedule %s deleted\n", d.ID)
					return err
				})
		},
	}
	run := &cobra.Command{
		Use: "run <id-or-name>", Short: "Run a schedule by hand: enqueue its job now, its own runs unchanged", Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := CheckID("schedule", args[0]); err != nil {
				return err
			}
			return runAPI(cmd, api, "schedule "+args[0], tenancy.ActScheduleManage,
				func(ctx context.Context, c *client.Client) (*client.EnqueueResult, error) {
					return c.RunSchedule(ctx, args[0])
				},
				func(w io.Writer, r *client.EnqueueResult) error {
					_, err := fmt.Fprintf(w, "schedule %s ran: job %s (%s)\n", args[0], r.JobID, r.Status)
					return err
				})
		},
	}
	cmd.AddCommand(
		one("get", "Show a schedule", tenancy.ActScheduleRead, (*client.Client).GetSchedule),
		one("enable", "Enable a schedule: it fires from its next run after now", tenancy.ActScheduleManage, (*client.Client).EnableSchedule),
		one("disable", "Disable a schedule until it is enabled", tenancy.ActScheduleManage, (*client.Client).DisableSchedule),
		run, del, scheduleCreateCmd(api), scheduleUpdateCmd(api))
	return cmd
}

// deleted is what a delete prints with --output json.
type deleted struct {
	ID      string `json:"id"`
	Deleted bool   `json:"deleted"`
}

func printSchedules(w io.Writer, ss []client.Schedule) error {
	tw := newTable(w)
	fmt.Fprintln(tw, "ID\tNAME\tQUEUE\tCRON\tTIMEZONE\tENABLED\tNEXT RUN\tLAST RUN\tLAST JOB")
	for _, s := range ss {
		last := ""
		if s.LastJobID != nil {
			last = *s.LastJobID
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%t\t%s\t%s\t%s\n", s.ID, s.Name, s.Queue, s.Cron, orDash(s.Timezone),
			s.Enabled, stamp(s.NextRun), stamp(s.LastRun), orDash(last))
	}
	return tw.Flush()
}

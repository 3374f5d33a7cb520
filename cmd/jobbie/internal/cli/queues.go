package cli

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/tenancy"
)

// The queue commands: `jobbie queues` (list, get, set), `pause`, `resume`,
// `clear`, `drain` and `destroy`.

func queueCmds() []*cobra.Command {
	return []*cobra.Command{queuesCmd(), pauseCmd(), resumeCmd(), clearCmd(), drainCmd(), destroyCmd()}
}

func queuesCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "queues",
		Short: "List the namespace's queues with their jobs per state",
		Long: `queues lists the namespace's queues: jobs per state, completions per minute
over the last five minutes, the age of the oldest pending job and whether
the queue is paused or draining. ` + "`jobbie queues get <name>`" + ` shows one with
its settings, ` + "`jobbie queues set <name> --push-url …`" + ` makes it a push queue.`,
		Args: cobra.NoArgs,
	}
	api := addConn(cmd, gatewayAPI)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		return runAPI(cmd, api, "queues", tenancy.ActQueueRead,
			func(ctx context.Context, c *client.Client) ([]client.Queue, error) {
				qs, err := c.ListQueues(ctx)
				if qs == nil {
					qs = []client.Queue{}
				}
				return qs, err
			},
			printQueues)
	}
	get := &cobra.Command{
		Use:   "get <name>",
		Short: "Show one queue: its counts, state and settings",
		Args:  exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := tenancy.ValidateQueue(args[0]); err != nil {
				return err
			}
			return runAPI(cmd, api, "queue "+args[0], tenancy.ActQueueRead,
				func(ctx context.Context, c *client.Client) (*client.Queue, error) { return c.GetQueue(ctx, args[0]) },
				printQueue)
		},
	}
	cmd.AddCommand(get, queueCreateCmd(api), queueSetCmd(api))
	return cmd
}

// queueState is "paused", "draining", "drained" or "active".
func queueState(q *client.Queue) string {
	switch {
	case q.Drained:
		return "drained"
	case q.Draining:
		return "draining"
	case q.Paused:
		return "paused"
	}
	return "active"
}

const queueCountColumns = "PENDING\tSCHEDULED\tACTIVE\tRETRYING\tHELD\tCOMPLETED\tDEAD\tCANCELLED"

func countCells(c client.QueueCounts) string {
	return fmt.Sprintf("%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d", c.Pending, c.Scheduled, c.Active, c.Retrying, c.Held,
		c.Completed, c.Dead, c.Cancelled)
}

func printQueues(w io.Writer, qs []client.Queue) error {
	tw := newTable(w)
	fmt.Fprintln(tw, "QUEUE\tSTATE\t"+queueCountColumns+"\tPER MIN\tOLDEST PENDING")
	for i := range qs {
		q := &qs[i]
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", q.Name, queueState(q), countCells(q.Counts),
			strconv.FormatFloat(q.Throughput, 'f', -1, 64), age(q.OldestPendingAge))
	}
	return tw.Flush()
}

// age shows seconds as a duration to the second ("-" for none).
func age(sec float64) string {
	switch {
	case sec <= 0:
		return "-"
	case sec < 1:
		return "<1s"
	}
	return (time.Duration(sec) * time.Second).String()
}

func printQueue(w io.Writer, q *client.Queue) error {
	tw := newTable(w)
	fmt.Fprintf(tw, "QUEUE\t%s\n", q.Name)
	if q.Description != "" {
		fmt.Fprintf(tw, "DESCRIPTION\t%s\n", oneLine(q.Description, 100))
	}
	fmt.Fprintf(tw, "STATE\t%s\n", queueState(q))
	c := q.Counts
	fmt.Fprintf(tw, "JOBS\tpending %d, scheduled %d, active %d, retrying %d, held %d, completed %d, dead %d, cancelled %d\n",
		c.Pending, c.Scheduled, c.Active, c.Retrying, c.Held, c.Completed, c.Dead, c.Cancelled)
	fmt.Fprintf(tw, "THROUGHPUT\t%s completed per minute (last 5 minutes)\n", strconv.FormatFloat(q.Throughput, 'f', -1, 64))
	fmt.Fprintf(tw, "OLDEST PENDING\t%s\n", age(q.OldestPendingAge))
	if q.Concurrency != nil {
		fmt.Fprintf(tw, "CONCURRENCY\t%d\n", *q.Concurrency)
	}
	if q.KeyConcurrency != nil {
		fmt.Fprintf(tw, "KEY CONCURRENCY\t%d\n", q.KeyConcurrency.Max)
	}
	if q.Throttle != nil {
		fmt.Fprintf(tw, "THROTTLE\t%d per %s\n", q.Throttle.Rate, q.Throttle.Period)
	}
	if d := queueDefaults(q.Defaults); d != "" {
		fmt.Fprintf(tw, "DEFAULTS\t%s\n", d)
	}
	printPush(tw, q.Push)
	if q.SchemaVersion > 0 {
		fmt.Fprintf(tw, "SCHEMA	version %d: %s\n", q.SchemaVersion, oneLine(string(q.Schema), 200))
	}
	return tw.Flush()
}

// queueDefaults lists the defaults the queue sets, "" for none.
func queueDefaults(d *client.QueueDefaults) string {
	if d == nil {
		return ""
	}
	var parts []string
	if d.MaxRetries != nil {
		parts = append(parts, "max_retries "+strconv.Itoa(*d.MaxRetries))
	}
	if d.RetryBackoff != nil {
		parts = append(parts, "retry_backoff "+*d.RetryBackoff)
	}
	for _, f := range []struct {
		name string
		raw  []byte
	}{{"retry_base_delay", d.RetryBaseDelay}, {"retry_max_delay", d.RetryMaxDelay}, {"lease_duration", d.LeaseDuration},
		{"expire_after", d.ExpireAfter}, {"retention", d.Retention}} {
		if v := strings.Trim(string(f.raw), `"`); v != "" && v != "null" {
			parts = append(parts, f.name+" "+v)
		}
	}
	return strings.Join(parts, ", ")
}

// queueOpCmd is a command that acts on one queue.
func queueOpCmd(use, short string, run func(ctx context.Context, c *client.Client, name string) (any, string, error)) *cobra.Command {
	cmd := &cobra.Command{Use: use + " <queue>", Short: short, Args: exactArgs(1)}
	api := addConn(cmd, gatewayAPI)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if err := tenancy.ValidateQueue(args[0]); err != nil {
			return err
		}
		var line string
		return runAPI(cmd, api, use+" "+args[0], tenancy.ActQueueManage,
			func(ctx context.Context, c *client.Client) (v any, err error) {
				v, line, err = run(ctx, c, args[0])
				return v, err
			},
			func(w io.Writer, _ any) error { _, err := fmt.Fprintln(w, line); return err })
	}
	return cmd
}

func pauseCmd() *cobra.Command {
	return queueOpCmd("pause", "Pause a queue: workers get none of its jobs; enqueues go on",
		func(ctx context.Context, c *client.Client, name string) (any, string, error) {
			q, err := c.PauseQueue(ctx, name)
			if err != nil {
				return nil, "", err
			}
			return q, fmt.Sprintf("%s paused (%d pending, %d active)", name, q.Counts.Pending, q.Counts.Active), nil
		})
}

func resumeCmd() *cobra.Command {
	return queueOpCmd("resume", "Resume a paused or drained queue",
		func(ctx context.Context, c *client.Client, name string) (any, string, error) {
			q, err := c.ResumeQueue(ctx, name)
			if err != nil {
				return nil, "", err
			}
			return q, fmt.Sprintf("%s resumed (%d pending)", name, q.Counts.Pending), nil
		})
}

// clearResult is `jobbie clear -o json`.
type clearResult struct {
	Queue   string `json:"queue"`
	Cleared int    `json:"cleared"`
}

func clearCmd() *cobra.Command {
	return queueOpCmd("clear", "Delete a queue's pending and scheduled jobs",
		func(ctx context.Context, c *client.Client, name string) (any, string, error) {
			n, err := c.ClearQueue(ctx, name)
			return clearResult{name, n}, fmt.Sprintf("%s cleared: %s deleted", name, plural(n, "job")), err
		})
}

func drainCmd() *cobra.Command {
	return queueOpCmd("drain", "Pause a queue and let its active jobs finish",
		func(ctx context.Context, c *client.Client, name string) (any, string, error) {
			r, err := c.DrainQueue(ctx, name)
			if err != nil {
				return nil, "", err
			}
			if r.Drained {
				return r, name + " drained: paused, no job active", nil
			}
			return r, fmt.Sprintf("%s draining: paused, %s still active (`jobbie queues get %s` shows when drained)",
				name, plural(int(r.Active), "job"), name), nil
		})
}

// DestroyResult is `jobbie destroy -o json`.
type DestroyResult struct {
	Queue       string `json:"queue"`
	Deleted     bool   `json:"deleted"`
	JobsDeleted int    `json:"jobs_deleted"`
}

func destroyCmd() *cobra.Command {
	var confirm bool
	cmd := queueOpCmd("destroy", "Delete a queue, its settings and all its jobs (needs --confirm)",
		func(ctx context.Context, c *client.Client, name string) (any, string, error) {
			n, err := c.DeleteQueue(ctx, name)
			return DestroyResult{name, err == nil, n}, fmt.Sprintf("%s destroyed with %s", name, plural(n, "job")), err
		})
	cmd.Flags().BoolVar(&confirm, "confirm", false, "yes, delete the queue and every job in it")
	// Refuse before the client is even built: nothing may be sent.
	run := cmd.RunE
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if !confirm {
			return fmt.Errorf("destroy %s: %w", args[0], errNoConfirm)
		}
		return run(cmd, args)
	}
	return cmd
}

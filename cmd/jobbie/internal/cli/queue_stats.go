package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// `jobbie queues stats` (a queue's history, docs/api/queues.md "History")
// and `jobbie queues scale` (what an autoscaler reads of it). Both need
// queue.read. The history's flags are checked here by the API's own rule
// (wire.ParseQueueStatsQuery), so a typo costs no request.

func queueStatsCmd(api *Conn) *cobra.Command {
	var from, to whenValue
	var step string
	cmd := &cobra.Command{
		Use:   "stats <name>",
		Short: "Show a queue's history per minute or hour: counts, depth, oldest age, processing times",
		Long: `stats shows a queue's history, one row per step, oldest first: jobs
enqueued, completed, failed (attempts) and dead in the step, the pending
depth and the oldest pending job's age last sampled in it, and the
50th, 95th and 99th percentiles of its attempts' processing times.

  jobbie queues stats emails.send                     # the last hour, per minute
  jobbie queues stats emails.send --step 1h           # the last day, per hour
  jobbie queues stats emails.send --from 6h --step 1h # the last 6 hours, per hour
  jobbie queues stats emails.send --from 2026-11-29T05:00:00Z --to 2026-11-29T06:00:00Z -o json

--from and --to take an RFC 3339 time, a date (midnight UTC) or a
duration back from now ("6h"); the range widens to whole steps. Minute
steps are kept 48 hours, hour steps 30 days.`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := tenancy.ValidateQueue(args[0]); err != nil {
				return err
			}
			q, err := statsQuery(time.Now(), from, to, step)
			if err != nil {
				return err
			}
			return runAPI(cmd, api, "queue "+args[0], tenancy.ActQueueRead,
				func(ctx context.Context, c *client.Client) (*client.QueueStats, error) {
					return c.QueueStats(ctx, args[0], q)
				},
				printQueueStats)
		},
	}
	f := cmd.Flags()
	f.Var(&from, "from", "start of the range: RFC 3339, a date, or a duration ago (default: an hour, or a day with --step 1h, before --to)")
	f.Var(&to, "to", "end of the range, as --from (default: now)")
	f.StringVar(&step, "step", client.StatsStepMinute, "bucket size: 1m (kept 48 hours) or 1h (kept 30 days)")
	return cmd
}

// statsQuery checks the flags at now as the server will (a field it
// names is the flag of that name) and makes the query; unset times stay
// zero, for the server's defaults.
func statsQuery(now time.Time, from, to whenValue, step string) (client.StatsQuery, error) {
	q := client.StatsQuery{From: from.at(now), To: to.at(now), Step: step}
	rfc := func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return t.UTC().Format(time.RFC3339Nano)
	}
	if _, err := wire.ParseQueueStatsQuery(now.UTC(), rfc(q.From), rfc(q.To), step); err != nil {
		var fe *wire.FieldError
		if errors.As(err, &fe) {
			return q, fmt.Errorf("--%s: %s", fe.Field, fe.Msg)
		}
		return q, err
	}
	return q, nil
}

func printQueueStats(w io.Writer, st *client.QueueStats) error {
	fmt.Fprintf(w, "%s from %s to %s, per %s (UTC)\n", st.Queue, st.From.UTC().Format(time.RFC3339),
		st.To.UTC().Format(time.RFC3339), st.Step)
	tw := newTable(w)
	fmt.Fprintln(tw, "TIME\tENQUEUED\tCOMPLETED\tFAILED\tDEAD\tPENDING\tOLDEST PENDING\tP50\tP95\tP99")
	for _, b := range st.Buckets {
		p := b.ProcessingTime
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%s\t%s\t%s\t%s\n", b.Start.UTC().Format("2006-01-02T15:04Z"),
			b.Enqueued, b.Completed, b.Failed, b.Dead, b.Pending, age(b.OldestPendingAge),
			millis(p.Count, p.P50), millis(p.Count, p.P95), millis(p.Count, p.P99))
	}
	return tw.Flush()
}

// millis shows a processing time given in milliseconds as a duration to
// the microsecond ("-" when no attempt ended in the step).
func millis(count int64, ms float64) string {
	if count == 0 {
		return "-"
	}
	return (time.Duration(math.Round(ms*1e3)) * time.Microsecond).String()
}

func queueScaleCmd(api *Conn) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "scale <name>",
		Short: "Show what an autoscaler sizes a queue's workers by: backlog, oldest age, in flight, demand",
		Long: `scale shows what GET /api/v1/queues/{name}/scale answers, live: the
pending jobs (backlog), the oldest one's age, the jobs held by workers
(in flight) and demand: those in flight and the pending jobs workers
could take now, never 0 while a job is in flight. A paused queue's
pending jobs are no demand, and a concurrency limit's room caps them;
LIMITED BY says which held jobs out (paused, concurrency; - for none).
--watch reads it again every --interval.`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := tenancy.ValidateQueue(args[0]); err != nil {
				return err
			}
			return runAPI(cmd, api, "queue "+args[0], tenancy.ActQueueRead,
				func(ctx context.Context, c *client.Client) (*client.QueueScale, error) {
					return c.QueueScale(ctx, args[0])
				},
				printQueueScale)
		},
	}
	return withWatch(cmd)
}

func printQueueScale(w io.Writer, s *client.QueueScale) error {
	tw := newTable(w)
	fmt.Fprintf(tw, "QUEUE\t%s\n", s.Queue)
	fmt.Fprintf(tw, "BACKLOG\t%d\n", s.Backlog)
	fmt.Fprintf(tw, "OLDEST PENDING\t%s\n", age(s.OldestPendingAge))
	fmt.Fprintf(tw, "IN FLIGHT\t%d\n", s.InFlight)
	fmt.Fprintf(tw, "DEMAND\t%d\n", s.Demand)
	fmt.Fprintf(tw, "PAUSED\t%s\n", strconv.FormatBool(s.Paused))
	limited := s.LimitedBy
	if limited == "" {
		limited = "-"
	}
	fmt.Fprintf(tw, "LIMITED BY\t%s\n", limited)
	return tw.Flush()
}

package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/tenancy"
)

// `jobbie top`: a live view of the namespace's queues, their rates and
// its workers, redrawn every --interval with plain ANSI escapes until q
// or Ctrl-C. --once prints one frame and ends.

// TopFrame is what one frame shows, and what `jobbie top --once -o json`
// prints: the API's queues, workers and cluster health as they answer.
type TopFrame struct {
	At      time.Time            `json:"at"`
	Queues  []client.Queue       `json:"queues"`
	Workers []client.WorkerInfo  `json:"workers"`
	Cluster client.ClusterHealth `json:"cluster"`
}

func topCmd() *cobra.Command {
	var once bool
	var interval time.Duration
	cmd := &cobra.Command{
		Use:   "top",
		Short: "A live view of the namespace's queues, their rates and its workers (q quits)",
		Long: `top shows the namespace's queues (state, jobs pending, scheduled, active,
retrying and dead, completions per second since the last frame and per
minute over the last five minutes, the age of the oldest pending job), its
workers and its shard cluster's leader and health, redrawn every
--interval until q or Ctrl-C. --once prints one frame without escapes and
ends (with -o json, the frame's data).`,
		Args: cobra.NoArgs,
	}
	api := addConn(cmd, gatewayAPI)
	cmd.Flags().BoolVar(&once, "once", false, "print one frame and end")
	cmd.Flags().DurationVar(&interval, "interval", time.Second, "how often the view is redrawn")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if interval < minWatchInterval {
			return fmt.Errorf("--interval must be at least %s, not %s", minWatchInterval, interval)
		}
		if !once && api.json() {
			return fmt.Errorf("-o %s prints one frame: add --once", api.output)
		}
		c, err := api.client()
		if err != nil {
			return err
		}
		defer c.CloseIdleConnections()
		out := cmd.OutOrStdout()
		if once {
			f, err := readTop(cmd.Context(), c)
			if err != nil {
				return err
			}
			if api.json() {
				return writeJSON(out, f)
			}
			return drawTop(out, f, nil, api.Namespace())
		}
		return runTop(cmd.Context(), cmd.InOrStdin(), out, c, interval, api.Namespace())
	}
	return cmd
}

// readTop reads one frame's data.
func readTop(ctx context.Context, c *client.Client) (*TopFrame, error) {
	f := &TopFrame{At: time.Now().UTC()}
	var err error
	if f.Queues, err = c.ListQueues(ctx); err != nil {
		return nil, fmt.Errorf("queues: %w", refused(err, tenancy.ActQueueRead))
	}
	if f.Workers, err = c.ListWorkers(ctx); err != nil {
		return nil, fmt.Errorf("workers: %w", refused(err, tenancy.ActQueueRead))
	}
	h, err := c.ClusterHealth(ctx)
	if err != nil {
		return nil, fmt.Errorf("cluster: %w", refused(err, tenancy.ActQueueRead))
	}
	f.Cluster = *h
	if f.Queues == nil {
		f.Queues = []client.Queue{}
	}
	if f.Workers == nil {
		f.Workers = []client.WorkerInfo{}
	}
	return f, nil
}

// runTop redraws until q, Ctrl-C or ctx's end. On a terminal it takes
// the keyboard in raw mode (so q needs no Enter) and the alternate
// screen, and gives both back when it ends.
func runTop(ctx context.Context, in io.Reader, out io.Writer, c *client.Client, interval time.Duration, ns string) error {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt)
	defer stop()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if f, ok := in.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		if old, err := term.MakeRaw(int(f.Fd())); err == nil {
			defer term.Restore(int(f.Fd()), old) //nolint:errcheck // nothing more to do
		}
	}
	go func() { // q, Q or Ctrl-C (raw mode reads it as a byte) quits
		b := make([]byte, 1)
		for {
			n, err := in.Read(b)
			if err != nil {
				return
			}
			if n == 1 && (b[0] == 'q' || b[0] == 'Q' || b[0] == 3) {
				cancel()
				return
			}
		}
	}()
	fmt.Fprint(out, "\x1b[?1049h\x1b[?25l") // the alternate screen, no cursor
	defer fmt.Fprint(out, "\x1b[?25h\x1b[?1049l")
	var prev *TopFrame
	for {
		f, err := readTop(ctx, c)
		if ctx.Err() != nil {
			return nil
		}
		var b strings.Builder
		b.WriteString("\x1b[H\x1b[2J")
		if err != nil {
			fmt.Fprintf(&b, "jobbie top: %v (trying again every %s; q quits)\n", err, interval)
		} else {
			_ = drawTop(&b, f, prev, ns)
			prev = f
		}
		// Raw mode takes the terminal's newline translation away.
		if _, err := io.WriteString(out, strings.ReplaceAll(b.String(), "\n", "\r\n")); err != nil {
			return err
		}
		t := time.NewTimer(interval)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
		}
	}
}

// drawTop writes one frame; prev (nil for none) gives the per-second
// completion rates.
func drawTop(w io.Writer, f *TopFrame, prev *TopFrame, ns string) error {
	health := "healthy"
	if !f.Cluster.Healthy {
		health = "UNHEALTHY"
	}
	if ns == "" {
		ns = "the key's default"
	}
	var depth, active int64
	for _, q := range f.Queues {
		depth += q.Counts.Pending + q.Counts.Retrying + q.Counts.Scheduled
		active += q.Counts.Active
	}
	live := 0
	for _, wk := range f.Workers {
		if wk.Status == "active" {
			live++
		}
	}
	fmt.Fprintf(w, "jobbie top  %s  namespace %s  shard %s leader %s (%s)  q quits\n", f.At.Format("15:04:05"),
		ns, f.Cluster.ShardID, orDash(f.Cluster.LeaderID), health)
	fmt.Fprintf(w, "%s, %d waiting, %d active; %s (%d active)\n\n", plural(len(f.Queues), "queue"), depth, active,
		plural(len(f.Workers), "worker"), live)
	before := map[string]int64{}
	if prev != nil {
		for _, q := range prev.Queues {
			before[q.Name] = q.Counts.Completed
		}
	}
	tw := newTable(w)
	fmt.Fprintln(tw, "QUEUE\tSTATE\tPENDING\tSCHEDULED\tACTIVE\tRETRYING\tDEAD\tDONE/S\tDONE/MIN\tOLDEST PENDING")
	for i := range f.Queues {
		q := &f.Queues[i]
		rate := "-"
		if n, ok := before[q.Name]; ok && prev != nil {
			if secs := f.At.Sub(prev.At).Seconds(); secs > 0 && q.Counts.Completed >= n {
				rate = strconv.FormatFloat(float64(q.Counts.Completed-n)/secs, 'f', 1, 64)
			}
		}
		c := q.Counts
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%d\t%s\t%s\t%s\n", q.Name, queueState(q), c.Pending, c.Scheduled, c.Active,
			c.Retrying, c.Dead, rate, strconv.FormatFloat(q.Throughput, 'f', 1, 64), age(q.OldestPendingAge))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	tw = newTable(w)
	fmt.Fprintln(tw, "WORKER\tHOST\tSTATUS\tACTIVE\tLAST SEEN\tQUEUES")
	for _, wk := range f.Workers {
		seen := "-"
		if !wk.LastSeen.IsZero() {
			seen = f.At.Sub(wk.LastSeen).Round(time.Second).String() + " ago"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\n", wk.ID, orDash(wk.Hostname), wk.Status, wk.ActiveJobs, seen,
			orDash(oneLine(strings.Join(wk.Queues, ","), 60)))
	}
	return tw.Flush()
}

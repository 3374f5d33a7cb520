package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"time"

	"github.com/spf13/cobra"
)

// --watch on the list commands: the list again every --interval until
// Ctrl-C, as watch(1) would run it. A table on a terminal is redrawn in
// place; elsewhere each table follows the last after a blank line, and
// with -o json (or yaml) each list is one more JSON value (YAML document).

// minWatchInterval keeps a mistyped --interval from hammering the API.
const minWatchInterval = 500 * time.Millisecond

// withWatch gives a list command -w/--watch and --interval.
func withWatch(cmd *cobra.Command) *cobra.Command {
	cmd.Flags().BoolP("watch", "w", false, "list again every --interval until Ctrl-C")
	cmd.Flags().Duration("interval", 2*time.Second, "how often --watch lists again")
	return cmd
}

// watchInterval is how often cmd lists again, 0 when it is not watching.
func watchInterval(cmd *cobra.Command) (time.Duration, error) {
	if f := cmd.Flags().Lookup("watch"); f == nil || f.Value.String() != "true" {
		if cmd.Flags().Changed("interval") {
			return 0, fmt.Errorf("--interval applies only with --watch")
		}
		return 0, nil
	}
	d, err := cmd.Flags().GetDuration("interval")
	if err != nil {
		return 0, err
	}
	if d < minWatchInterval {
		return 0, fmt.Errorf("--interval must be at least %s, not %s", minWatchInterval, d)
	}
	return d, nil
}

// watch calls frame every interval until ctx ends or Ctrl-C, and
// returns frame's first error. Ctrl-C is a normal end.
func watch(ctx context.Context, out io.Writer, table bool, interval time.Duration, frame func(context.Context) error) error {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt)
	defer stop()
	redraw := table && isTerminal(out)
	for n := 0; ; n++ {
		switch {
		case redraw:
			fmt.Fprint(out, "\x1b[H\x1b[2J") // home, clear the screen
		case table && n > 0:
			fmt.Fprintln(out)
		}
		if table {
			fmt.Fprintf(out, "every %s, %s (Ctrl-C ends)\n", interval, time.Now().UTC().Format(time.RFC3339))
		}
		if err := frame(ctx); err != nil {
			if ctx.Err() != nil {
				return nil
			}
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

// isTerminal reports whether w is a terminal, where a frame is redrawn in
// place (/dev/null passes too, harmlessly).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

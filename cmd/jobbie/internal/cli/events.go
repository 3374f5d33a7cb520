package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// `jobbie events`: the namespace's job lifecycle events over Server-Sent
// Events. With --follow it streams until Ctrl-C and, when the stream
// breaks, reconnects from the last event it printed, so none is lost or
// printed twice.

// eventLine is an event as `jobbie events -o json` prints it: the
// stream's id and gap mark beside the event's data.
type eventLine struct {
	ID     string `json:"id"`
	Missed bool   `json:"missed,omitempty"` // events before this one were no longer kept
	wire.Event
}

// reconnectBackoff bounds the wait between reconnects of --follow.
const (
	reconnectFirst = 500 * time.Millisecond
	reconnectMax   = 10 * time.Second
)

func eventsCmd() *cobra.Command {
	var (
		follow  bool
		queues  []string
		sinceID string
		limit   int
		wait    time.Duration
	)
	cmd := &cobra.Command{
		Use:   "events",
		Short: "Print the namespace's job events; --follow streams them until Ctrl-C",
		Long: `events prints the namespace's job lifecycle events (enqueued, started,
completed, failed, dead, cancelled, pending, retried, lease_released).

Without --follow it prints the events the namespace's log keeps after
--since-id (from the oldest kept when absent) and ends when none has come
for --wait. With --follow it starts after --since-id (with the next event
when absent) and streams until Ctrl-C, reconnecting from the last event
printed when the stream breaks. --queue keeps one queue's events (it may
be given again); --limit ends after that many.

  jobbie events --follow
  jobbie events --follow --queue emails.send -o json | jq -c 'select(.type == "dead")'
  jobbie events --since-id s1:5242880`,
		Args: cobra.NoArgs,
	}
	api := addConn(cmd, gatewayAPI)
	f := cmd.Flags()
	f.BoolVarP(&follow, "follow", "f", false, "stream new events until Ctrl-C, reconnecting when the stream breaks")
	f.StringSliceVar(&queues, "queue", nil, "only this queue's events (again for more)")
	f.StringVar(&sinceID, "since-id", "", "start after this event id (as -o json prints it)")
	f.IntVar(&limit, "limit", 0, "end after this many events (0: no limit)")
	f.DurationVar(&wait, "wait", 2*time.Second, "without --follow: end when no event has come for this long")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		for _, q := range queues {
			if err := tenancy.ValidateQueue(q); err != nil {
				return fmt.Errorf("--queue: %w", err)
			}
		}
		if err := checkEventID(sinceID); err != nil {
			return err
		}
		if limit < 0 {
			return errors.New("--limit must not be negative")
		}
		if wait <= 0 {
			return fmt.Errorf("--wait must be positive, not %s", wait)
		}
		if follow && cmd.Flags().Changed("wait") {
			return errors.New("--wait applies only without --follow")
		}
		c, err := api.client()
		if err != nil {
			return err
		}
		defer c.CloseIdleConnections()
		ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt)
		defer stop()
		s := &eventStream{c: c, out: cmd.OutOrStdout(), errOut: cmd.ErrOrStderr(), json: api.json(),
			queues: queues, last: sinceID, limit: limit}
		if !follow && s.last == "" {
			s.last = "0" // from the oldest event the log keeps
			s.fromOldest = true
		}
		if follow {
			return s.follow(ctx)
		}
		return s.backlog(ctx, wait)
	}
	return cmd
}

// checkEventID refuses an id the stream never sends: "<shard>:<seq>" or
// a bare sequence number.
func checkEventID(id string) error {
	if id == "" {
		return nil
	}
	shard, seq, scoped := strings.Cut(id, ":")
	if !scoped {
		seq = shard
	}
	if _, err := strconv.ParseUint(seq, 10, 64); err != nil || (scoped && strings.TrimSpace(shard) == "") ||
		strings.ContainsFunc(id, func(r rune) bool { return r <= ' ' }) {
		return fmt.Errorf("--since-id %q is not an event id (<shard>:<number>, as -o json prints it)", id)
	}
	return nil
}

// eventStream prints events from the stream, remembering the last id.
type eventStream struct {
	c           *client.Client
	out, errOut io.Writer
	json        bool
	queues      []string
	last        string
	limit, n    int
	// fromOldest: the backlog was asked from the oldest event kept, so
	// the stream's gap mark before its first event says nothing lost.
	fromOldest bool
}

var errLimit = errors.New("limit reached")

// print writes one event unless --queue passes over it; errLimit once
// --limit events are printed.
func (s *eventStream) print(ev client.Event) error {
	s.last = ev.ID
	if s.fromOldest {
		// A log that does not start at 1 (its first events trimmed, or
		// ids that begin high) is not a gap when asked from the oldest.
		ev.Missed, s.fromOldest = false, false
	}
	if len(s.queues) > 0 && !slices.Contains(s.queues, ev.Queue) {
		return nil
	}
	var err error
	if s.json {
		err = writeJSON(s.out, eventLine{ID: ev.ID, Missed: ev.Missed, Event: ev.Event})
	} else {
		if ev.Missed {
			fmt.Fprintln(s.out, "# events were missed here: the log no longer kept them")
		}
		_, err = fmt.Fprintf(s.out, "%s  %-14s  %-10s  %s  %s  attempt %d%s  (%s)\n", ev.At.UTC().Format(time.RFC3339Nano),
			ev.Type, ev.State, ev.Queue, ev.JobID, ev.Attempt, workerCell(ev.WorkerID), ev.ID)
	}
	if err != nil {
		return err
	}
	s.n++
	if s.limit > 0 && s.n >= s.limit {
		return errLimit
	}
	return nil
}

func workerCell(id string) string {
	if id == "" {
		return ""
	}
	return "  worker " + id
}

// backlog prints the events after s.last until none has come for wait.
func (s *eventStream) backlog(ctx context.Context, wait time.Duration) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ch, err := s.c.Events(ctx, s.last)
	if err != nil {
		return fmt.Errorf("events: %w", refused(err, tenancy.ActJobRead))
	}
	quiet := time.NewTimer(wait)
	defer quiet.Stop()
	for {
		select {
		case ev, ok := <-ch:
			if !ok {
				return nil
			}
			if err := s.print(ev); err != nil {
				return ignoreLimit(err)
			}
			quiet.Reset(wait)
		case <-quiet.C:
			return nil
		case <-ctx.Done():
			return nil
		}
	}
}

// follow streams until ctx ends, reconnecting after the last event
// printed whenever the stream breaks. A refusal (4xx) ends it.
func (s *eventStream) follow(ctx context.Context) error {
	backoff := reconnectFirst
	for {
		ch, err := s.c.Events(ctx, s.last)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			var apiErr *client.Error
			if errors.As(err, &apiErr) && apiErr.Status < 500 && apiErr.Status != 429 {
				return fmt.Errorf("events: %w", refused(err, tenancy.ActJobRead))
			}
			fmt.Fprintf(s.errOut, "events: %v; reconnecting in %s\n", err, backoff)
		} else {
			got := false
			for ev := range ch {
				got = true
				if err := s.print(ev); err != nil {
					return ignoreLimit(err)
				}
			}
			if ctx.Err() != nil {
				return nil
			}
			if got {
				backoff = reconnectFirst
			}
			fmt.Fprintf(s.errOut, "events: the stream broke; reconnecting after %s in %s\n", orDash(s.last), backoff)
		}
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
		}
		backoff = min(2*backoff, reconnectMax)
	}
}

func ignoreLimit(err error) error {
	if errors.Is(err, errLimit) {
		return nil
	}
	return err
}

package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/jobbie/jobbie/client"
)

// bulkChunk is how many ids one bulk request carries: well under the
// server's limit, so one slow request never holds much.
const bulkChunk = 1000

// bulkCmd is `jobbie bulk`: an action applied to the jobs piped in (ids,
// `jobbie search` table or JSON) or to a filter, plus show and abort for
// operations the server runs in the background.
func bulkCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "bulk",
		Short: "Apply an action to many jobs: retry, delete, cancel, requeue, move, change-priority, approve, reject",
		Args:  cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return cmd.Help()
			}
			return fmt.Errorf("unknown bulk action %q: want retry, delete, cancel, requeue, move, change-priority, approve, reject, show or abort", args[0])
		},
		Long: `Bulk applies an action to the jobs whose ids arrive on stdin, or with
--filter to every job a search filter selects. Stdin may hold the output of
` + "`jobbie search`" + ` (the table or --output json), a JSON array of ids or of job
objects, {"jobs": [...]}, or one id per line (the first field of each line).
Ids go to the server 1,000 per request; the summary adds them up.

  jobbie search --queue emails.send --state dead | jobbie bulk retry
  jobbie search --queue old.queue --state pending -o json | jobbie bulk move new.queue
  jobbie bulk retry --filter '{"queue":"emails.send","state":["dead"]}'
  jobbie bulk change-priority critical --filter '{"queue":"emails.send","tags":{"tenant":"acme"}}'

A filter that matches more than 10,000 jobs starts a background operation:
bulk prints its id and follows its progress (unless --no-wait). ` + "`jobbie bulk show <id>`" + `
shows one, ` + "`jobbie bulk abort <id>`" + ` stops it. The exit status is 1 when
any job failed.`,
	}
	api := addConn(cmd, gatewayAPI)
	for _, a := range []struct {
		use, action, short string
		aliases            []string
	}{
		{"retry", client.BulkRetry, "Retry dead, cancelled or completed jobs, attempts reset", nil},
		{"delete", client.BulkDelete, "Delete jobs for good", nil},
		{"cancel", client.BulkCancel, "Cancel pending, scheduled, retrying or active jobs", nil},
		{"requeue", client.BulkRequeue, "Put dead jobs back to pending, attempt history kept", nil},
		{"move <queue>", client.BulkMove, "Move jobs to another queue", nil},
		{"change-priority <priority>", client.BulkChangePriority, "Change jobs' priority: critical, high or normal",
			[]string{client.BulkChangePriority}},
		{"approve", client.BulkApprove, "Run jobs an AI budget holds, outside the budget", nil},
		{"reject", client.BulkReject, "Cancel jobs an AI budget holds", nil},
	} {
		cmd.AddCommand(bulkActionCmd(api, a.use, a.action, a.short, a.aliases))
	}
	cmd.AddCommand(bulkShowCmd(api), bulkAbortCmd(api))
	return cmd
}

func bulkActionCmd(api *Conn, use, action, short string, aliases []string) *cobra.Command {
	var (
		filter string
		noWait bool
	)
	nargs := 0
	if strings.Contains(use, "<") {
		nargs = 1
	}
	cmd := &cobra.Command{
		Use:     use,
		Short:   short,
		Aliases: aliases,
		Args:    cobra.ExactArgs(nargs),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := api.client()
			if err != nil {
				return err
			}
			defer c.CloseIdleConnections()
			base := client.BulkRequest{Action: action}
			switch action {
			case client.BulkMove:
				base.MoveToQueue = args[0]
			case client.BulkChangePriority:
				base.Priority = client.Priority(args[0])
			}
			if filter != "" {
				if base.Filter, err = parseFilter(filter); err != nil {
					return err
				}
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			b := &bulkRun{c: c, base: base, noWait: noWait, json: api.json(),
				stdout: cmd.OutOrStdout(), stderr: cmd.ErrOrStderr()}
			return b.run(ctx, cmd.InOrStdin())
		},
	}
	cmd.Flags().StringVar(&filter, "filter", "", "act on every job this JSON search filter selects instead of ids on stdin")
	cmd.Flags().BoolVar(&noWait, "no-wait", false, "print a background operation's id and return instead of following it")
	return cmd
}

// parseFilter reads --filter strictly: a misspelt field would otherwise
// be dropped and widen the filter, and an empty one selects every job.
func parseFilter(s string) (*client.SearchFilter, error) {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.DisallowUnknownFields()
	var f client.SearchFilter
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("--filter: %w", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("--filter: want one JSON object")
	}
	if b, _ := json.Marshal(f); string(b) == "{}" {
		return nil, errors.New("--filter selects every job in the namespace; name at least one field")
	}
	return &f, nil
}

// bulkSummary is what one `jobbie bulk <action>` did, summed over its
// requests.
type bulkSummary struct {
	Action     string                 `json:"action"`
	Requests   int                    `json:"requests"`
	Affected   int64                  `json:"affected"`
	Skipped    int64                  `json:"skipped"`
	Errors     int64                  `json:"errors"`
	DurationMS float64                `json:"duration_ms"`
	Failures   []client.BulkFailure   `json:"failures"`
	Operations []client.BulkOperation `json:"operations,omitempty"` // run in the background
}

// bulkRun is one `jobbie bulk <action>`.
type bulkRun struct {
	c              *client.Client
	base           client.BulkRequest
	noWait, json   bool
	stdout, stderr io.Writer
	sum            bulkSummary
}

func (b *bulkRun) run(ctx context.Context, stdin io.Reader) error {
	b.sum = bulkSummary{Action: b.base.Action, Failures: []client.BulkFailure{}}
	if b.base.Filter != nil {
		if err := b.send(ctx, b.base); err != nil {
			return err
		}
	} else {
		var ids []string
		err := errNoInput
		if !isCharDevice(stdin) {
			ids, err = readJobIDs(stdin)
		}
		if errors.Is(err, errNoInput) {
			return errors.New("no job ids on stdin: pipe `jobbie search` or ids into it, or pass --filter")
		} else if err != nil {
			return fmt.Errorf("stdin: %w", err)
		}
		for from := 0; from < len(ids); from += bulkChunk {
			req := b.base
			req.JobIDs = ids[from:min(from+bulkChunk, len(ids))]
			if err := b.send(ctx, req); err != nil {
				if b.sum.Requests > 0 {
					fmt.Fprintf(b.stderr, "%s: stopped after %d of %d ids: %s\n", b.sum.Action, from, len(ids), b.counts())
				}
				return err
			}
		}
	}
	return b.report()
}

// send makes one bulk request and adds its outcome to the summary,
// following a background operation unless told not to.
func (b *bulkRun) send(ctx context.Context, req client.BulkRequest) error {
	res, op, err := b.c.Bulk(ctx, req)
	if err != nil {
		return fmt.Errorf("%s: %w", req.Action, apiError(err))
	}
	b.sum.Requests++
	if res != nil {
		b.sum.Affected += res.Affected
		b.sum.Skipped += res.Skipped
		b.sum.Errors += res.Errors
		b.sum.DurationMS += float64(res.Duration) / float64(time.Millisecond)
		b.sum.Failures = append(b.sum.Failures, res.Failures...)
		return nil
	}
	if b.noWait {
		b.sum.Operations = append(b.sum.Operations, *op)
		return nil
	}
	fmt.Fprintf(b.stderr, "%s: bulk operation %s started for about %d jobs\n", req.Action, op.ID, op.Total)
	final, err := b.c.WatchBulk(ctx, op.ID, func(p client.BulkOperation) {
		fmt.Fprintf(b.stderr, "%s: %s\n", p.ID, progressLine(p))
	})
	if err != nil {
		if ctx.Err() != nil {
			fmt.Fprintf(b.stderr, "stopped watching %s; it runs on (`jobbie bulk abort %s` stops it)\n", op.ID, op.ID)
		}
		return fmt.Errorf("%s: %s: %w", req.Action, op.ID, apiError(err))
	}
	b.sum.Affected += final.Affected
	b.sum.Skipped += final.Skipped
	b.sum.Errors += final.Errors
	b.sum.Operations = append(b.sum.Operations, final)
	return nil
}

func progressLine(op client.BulkOperation) string {
	return fmt.Sprintf("%s, %d of %d processed, %d affected, %d skipped, %d errors",
		op.Status, op.Processed, op.Total, op.Affected, op.Skipped, op.Errors)
}

func (b *bulkRun) counts() string {
	return fmt.Sprintf("%d affected, %d skipped, %d errors", b.sum.Affected, b.sum.Skipped, b.sum.Errors)
}

// report prints the summary and turns failures into the exit status.
func (b *bulkRun) report() error {
	if b.json {
		if err := writeJSON(b.stdout, b.sum); err != nil {
			return err
		}
	} else {
		var running int
		var finished []string
		for _, op := range b.sum.Operations {
			if op.Done() {
				finished = append(finished, fmt.Sprintf("bulk operation %s %s, %d processed", op.ID, op.Status, op.Processed))
				continue
			}
			running++
			fmt.Fprintf(b.stdout, "%s: bulk operation %s is processing about %d jobs (`jobbie bulk show %s`)\n",
				b.sum.Action, op.ID, op.Total, op.ID)
		}
		if b.sum.Requests == 0 || b.sum.Requests > running { // counts to report
			line := b.sum.Action + ": " + b.counts()
			if len(finished) > 0 {
				line += " (" + strings.Join(finished, "; ") + ")"
			}
			fmt.Fprintln(b.stdout, line)
		}
		for _, f := range b.sum.Failures {
			fmt.Fprintf(b.stderr, "  %s: %s\n", f.JobID, f.Error)
		}
		if n := b.sum.Errors - int64(len(b.sum.Failures)); n > 0 && len(b.sum.Failures) > 0 {
			fmt.Fprintf(b.stderr, "  … and %d more\n", n)
		}
	}
	for _, op := range b.sum.Operations {
		if op.Status == client.BulkCancelled {
			return fmt.Errorf("%s: bulk operation %s was cancelled after %d of %d jobs", b.sum.Action, op.ID, op.Processed, op.Total)
		}
	}
	if b.sum.Errors > 0 {
		return fmt.Errorf("%s: %d jobs failed", b.sum.Action, b.sum.Errors)
	}
	return nil
}

// readJobIDs reads job ids from what `jobbie search` prints or a user
// types: JSON (ids, job objects, arrays of either, {"jobs": [...]}, one
// value or a stream of them) or text whose lines start with an id (the
// table's header and blank lines are skipped). Repeats are dropped.
// Input that holds no ids ("[]", a bare table header) is not an error:
// a search that found nothing leaves nothing to do. Empty input is
// errNoInput, since the pipe was probably forgotten.
func readJobIDs(r io.Reader) ([]string, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return nil, errNoInput
	}
	var ids []string
	if strings.ContainsRune(`[{"`, rune(data[0])) {
		dec := json.NewDecoder(bytes.NewReader(data))
		for {
			var v json.RawMessage
			if err := dec.Decode(&v); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				return nil, fmt.Errorf("JSON: %w", err)
			}
			if ids, err = appendJSONIDs(ids, v); err != nil {
				return nil, err
			}
		}
	} else {
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			if f := strings.Fields(sc.Text()); len(f) > 0 && f[0] != "ID" {
				ids = append(ids, f[0])
			}
		}
		if err := sc.Err(); err != nil {
			return nil, err
		}
	}
	return dedupe(ids), nil
}

var errNoInput = errors.New("no input")

func appendJSONIDs(ids []string, v json.RawMessage) ([]string, error) {
	switch v[0] {
	case '"':
		var id string
		if err := json.Unmarshal(v, &id); err != nil {
			return nil, err
		}
		if id == "" {
			return nil, errors.New("an empty job id")
		}
		return append(ids, id), nil
	case '[':
		var elems []json.RawMessage
		if err := json.Unmarshal(v, &elems); err != nil {
			return nil, err
		}
		for _, e := range elems {
			if len(e) == 0 || e[0] == '[' {
				return nil, errors.New("want job ids or job objects in the array")
			}
			var err error
			if ids, err = appendJSONIDs(ids, e); err != nil {
				return nil, err
			}
		}
		return ids, nil
	case '{':
		var obj struct {
			ID   string          `json:"id"`
			Jobs json.RawMessage `json:"jobs"`
		}
		if err := json.Unmarshal(v, &obj); err != nil {
			return nil, err
		}
		if obj.ID != "" {
			return append(ids, obj.ID), nil
		}
		if len(obj.Jobs) > 0 && obj.Jobs[0] == '[' {
			return appendJSONIDs(ids, obj.Jobs)
		}
		return nil, errors.New(`a JSON object with neither "id" nor "jobs"`)
	}
	return nil, fmt.Errorf("want job ids or job objects, not %.20s", v)
}

func dedupe(ids []string) []string {
	seen := make(map[string]bool, len(ids))
	out := ids[:0]
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}

func bulkShowCmd(api *Conn) *cobra.Command {
	return &cobra.Command{
		Use:   "show <operation id>",
		Short: "Show a background bulk operation's progress",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return bulkOpCommand(cmd, api, args[0], (*client.Client).BulkStatus)
		},
	}
}

func bulkAbortCmd(api *Conn) *cobra.Command {
	return &cobra.Command{
		Use:   "abort <operation id>",
		Short: "Stop a background bulk operation (what it did stays done)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return bulkOpCommand(cmd, api, args[0], (*client.Client).CancelBulk)
		},
	}
}

func bulkOpCommand(cmd *cobra.Command, api *Conn, id string,
	call func(*client.Client, context.Context, string) (*client.BulkOperation, error)) error {
	c, err := api.client()
	if err != nil {
		return err
	}
	defer c.CloseIdleConnections()
	op, err := call(c, cmd.Context(), id)
	if err != nil {
		return fmt.Errorf("%s: %w", id, apiError(err))
	}
	if api.json() {
		return writeJSON(cmd.OutOrStdout(), op)
	}
	tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 0, 2, ' ', 0)
	created, finished := "-", "-"
	if op.CreatedAt != nil {
		created = op.CreatedAt.UTC().Format(time.RFC3339)
	}
	if op.FinishedAt != nil {
		finished = op.FinishedAt.UTC().Format(time.RFC3339)
	}
	fmt.Fprintf(tw, "ID\t%s\nACTION\t%s\nSTATUS\t%s\nPROCESSED\t%d of %d\nAFFECTED\t%d\nSKIPPED\t%d\nERRORS\t%d\nCREATED\t%s\nFINISHED\t%s\n",
		op.ID, orDash(op.Action), op.Status, op.Processed, op.Total, op.Affected, op.Skipped, op.Errors,
		created, finished)
	return tw.Flush()
}

package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/jobbie/jobbie/client"
)

// searchCmd is `jobbie search`: every filter of the search API as a flag,
// all pages printed as one table or one JSON array.
func searchCmd() *cobra.Command {
	var (
		req             client.SearchRequest
		limit, pageSize int
	)
	cmd := &cobra.Command{
		Use:   "search",
		Short: "Search jobs by queue, state, tags, payload, errors and times",
		Long: `Search lists the jobs that match every filter given, following the server's
cursors until the last page (or --limit jobs). The table goes to stdout and
a count to stderr, so both outputs pipe into ` + "`jobbie bulk`" + `:

  jobbie search --queue emails.send --state dead
  jobbie search --tag tenant=acme-corp --state pending,scheduled
  jobbie search --queue reports --payload-jq '.customer_id == "cust_42"' -o json > jobs.json
  jobbie search --error-contains SMTP --created-after 2026-02-10 -o json | jobbie bulk retry
  jobbie search --state dead -o json | jq 'group_by(.queue) | map({queue: .[0].queue, count: length})'

Times are RFC 3339 (2026-02-10T15:04:05Z, 2026-02-10T15:04:05+01:00) or a
date (2026-02-10, midnight UTC). --output json prints one JSON array of the
jobs as the API returns them.`,
		Args: cobra.NoArgs,
	}
	api := addConn(cmd, gatewayAPI)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		c, err := api.client()
		if err != nil {
			return err
		}
		defer c.CloseIdleConnections()
		if pageSize < 1 || pageSize > client.MaxSearchLimit {
			return fmt.Errorf("--page-size must be 1 to %d, not %d", client.MaxSearchLimit, pageSize)
		}
		if limit < 0 {
			return fmt.Errorf("--limit must not be negative")
		}
		s := searcher{c: c, limit: limit, pageSize: pageSize, json: api.json(),
			stdout: cmd.OutOrStdout(), stderr: cmd.ErrOrStderr()}
		return s.run(cmd.Context(), req)
	}
	fl := &req.SearchFilter
	f := cmd.Flags()
	f.StringVar(&fl.Queue, "queue", "", "queue name")
	f.StringSliceVar(&fl.State, "state", nil, "job state; repeat or comma-separate for any of several")
	f.StringVar((*string)(&fl.Priority), "priority", "", "priority: critical, high or normal")
	f.Var(tagsValue{&fl.Tags}, "tag", "tag `key=value` the job must carry; repeat for several (all must match)")
	f.StringVar(&fl.PayloadContains, "payload-contains", "", "substring of the JSON payload")
	f.StringVar(&fl.PayloadJQ, "payload-jq", "", "jq expression the payload must satisfy, e.g. '.amount > 100'")
	for _, tf := range []struct {
		name  string
		after **time.Time
		befor **time.Time
	}{
		{"created", &fl.CreatedAfter, &fl.CreatedBefore},
		{"scheduled", &fl.ScheduledAfter, &fl.ScheduledBefore},
		{"started", &fl.StartedAfter, &fl.StartedBefore},
		{"completed", &fl.CompletedAfter, &fl.CompletedBefore},
		{"expire", &fl.ExpireAfter, &fl.ExpireBefore},
	} {
		f.Var(timeValue{tf.after}, tf.name+"-after", "jobs "+timeVerb(tf.name)+" after this time")
		f.Var(timeValue{tf.befor}, tf.name+"-before", "jobs "+timeVerb(tf.name)+" before this time")
	}
	f.StringVar(&fl.WorkerID, "worker-id", "", "jobs processed by this worker")
	f.Var(boolPtrValue{&fl.HasErrors}, "has-errors", "jobs with (or, =false, without) at least one error")
	f.Lookup("has-errors").NoOptDefVal = "true"
	f.StringVar(&fl.ErrorContains, "error-contains", "", "substring of an error message")
	f.StringVar(&fl.BatchID, "batch-id", "", "jobs of this batch")
	f.StringVar(&fl.UniqueKey, "unique-key", "", "jobs with this unique key")
	f.Var(intPtrValue{&fl.AttemptMin}, "attempt-min", "jobs with at least this many attempts")
	f.Var(intPtrValue{&fl.AttemptMax}, "attempt-max", "jobs with at most this many attempts")
	f.StringVar(&fl.JobIDPrefix, "job-id-prefix", "", "jobs whose id starts with this")
	f.StringVar(&fl.HeldReason, "held-reason", "", "held jobs held for this reason: budget (an AI budget holds them)")
	f.StringVar(&fl.HeldBudget, "held-budget", "", "held jobs this AI budget holds")
	f.StringVar(&req.Sort, "sort", "", "sort by created_at (default), updated_at, scheduled_at, started_at, completed_at, priority or attempt")
	f.StringVar(&req.Order, "order", "", "asc or desc (default)")
	f.IntVar(&limit, "limit", 0, "most jobs to print in all (0: every match)")
	f.IntVar(&pageSize, "page-size", client.MaxSearchLimit, "jobs per request")
	return cmd
}

func timeVerb(name string) string {
	if name == "expire" {
		return "expiring"
	}
	return name
}

// searcher runs one `jobbie search`.
type searcher struct {
	c               *client.Client
	limit, pageSize int
	json            bool
	stdout, stderr  io.Writer
}

// run pages through the results. JSON is streamed (an export may be
// large) and left unclosed on an error, so a consumer fails rather than
// act on a part; the table is held back until the end for the same
// reason, since `| jobbie bulk` would act on whatever lines it got.
func (s *searcher) run(ctx context.Context, req client.SearchRequest) error {
	out := bufio.NewWriter(s.stdout)
	defer out.Flush()
	var table bytes.Buffer
	tw := tabwriter.NewWriter(&table, 0, 0, 2, ' ', 0)
	if !s.json {
		fmt.Fprintln(tw, "ID\tQUEUE\tSTATE\tPRIORITY\tATTEMPT\tCREATED\tLAST ERROR")
	}
	var (
		printed int
		took    time.Duration
		first   *client.SearchPage
		more    bool
	)
	for n := 1; ; n++ {
		req.Limit = s.pageSize
		if s.limit > 0 {
			req.Limit = min(s.pageSize, s.limit-printed)
		}
		page, err := s.c.Search(ctx, req)
		if err != nil {
			return fmt.Errorf("search: %w", apiError(err))
		}
		if first == nil {
			first = page
			if s.json {
				out.WriteString("[")
			}
		}
		took += page.Duration
		for _, j := range page.Jobs {
			if s.limit > 0 && printed == s.limit {
				break
			}
			if err := s.printJob(out, tw, j, printed); err != nil {
				return err
			}
			printed++
		}
		more = page.HasMore
		stop := !more || s.limit > 0 && printed >= s.limit
		if page.Partial {
			next := "continuing from where it stopped"
			if stop {
				next = "the results may be incomplete"
			}
			fmt.Fprintf(s.stderr, "note: page %d is partial: the payload_jq scan ran out of its time budget; %s\n", n, next)
		}
		if stop {
			break
		}
		if page.Cursor == "" {
			return errors.New("search: the server said there is more but sent no cursor")
		}
		req.Cursor = page.Cursor
	}
	if s.json {
		if printed > 0 {
			out.WriteString("\n")
		}
		out.WriteString("]\n")
		return out.Flush()
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if _, err := out.Write(table.Bytes()); err != nil {
		return err
	}
	if err := out.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(s.stderr, "%s (%s)\n", countLine(printed, first, more), formatMS(took))
	return nil
}

func (s *searcher) printJob(out *bufio.Writer, tw io.Writer, j client.SearchJob, i int) error {
	if s.json {
		if i > 0 {
			out.WriteString(",")
		}
		out.WriteString("\n")
		var b bytes.Buffer
		if err := json.Compact(&b, j.Raw); err != nil {
			return fmt.Errorf("search: job %s: %w", j.ID, err)
		}
		_, err := out.Write(b.Bytes())
		return err
	}
	created := "-"
	if !j.CreatedAt.IsZero() {
		created = j.CreatedAt.UTC().Format(time.RFC3339)
	}
	_, err := fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%s\n", orDash(j.ID), orDash(j.Queue), orDash(j.State),
		orDash(string(j.Priority)), j.Attempt, created, orDash(oneLine(j.LastError, 80)))
	return err
}

// countLine is "142 jobs", or "50 of 142 jobs" when not every match was
// printed ("about" when the server's total is an estimate).
func countLine(printed int, first *client.SearchPage, more bool) string {
	if !more || first == nil {
		noun := "jobs"
		if printed == 1 {
			noun = "job"
		}
		return fmt.Sprintf("%d %s", printed, noun)
	}
	// "1 of 5 jobs": the noun goes with the total.
	noun := "jobs"
	if first.Total == 1 {
		noun = "job"
	}
	about := ""
	if !first.TotalExact {
		about = "about "
	}
	return fmt.Sprintf("%d of %s%d %s", printed, about, first.Total, noun)
}

func formatMS(d time.Duration) string {
	ms := float64(d) / float64(time.Millisecond)
	if ms < 10 {
		return strconv.FormatFloat(ms, 'f', 1, 64) + " ms"
	}
	return strconv.FormatFloat(ms, 'f', 0, 64) + " ms"
}

// timeValue is a time flag: RFC 3339, or a date meaning midnight UTC.
type timeValue struct{ p **time.Time }

var timeLayouts = []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02"}

func (v timeValue) Set(s string) error {
	for _, layout := range timeLayouts {
		if t, err := time.Parse(layout, strings.TrimSpace(s)); err == nil {
			*v.p = &t
			return nil
		}
	}
	return fmt.Errorf("want RFC 3339 (2026-02-10T15:04:05Z) or a date (2026-02-10)")
}

func (v timeValue) String() string {
	if v.p == nil || *v.p == nil {
		return ""
	}
	return (*v.p).Format(time.RFC3339Nano)
}

func (timeValue) Type() string { return "time" }

// tagsValue collects repeated key=value flags into a map.
type tagsValue struct{ m *map[string]string }

func (v tagsValue) Set(s string) error {
	k, val, ok := strings.Cut(s, "=")
	if !ok || k == "" {
		return fmt.Errorf("want key=value")
	}
	if *v.m == nil {
		*v.m = map[string]string{}
	}
	(*v.m)[k] = val
	return nil
}

func (v tagsValue) String() string {
	if v.m == nil || len(*v.m) == 0 {
		return ""
	}
	parts := make([]string, 0, len(*v.m))
	for k, val := range *v.m {
		parts = append(parts, k+"="+val)
	}
	slices.Sort(parts)
	return strings.Join(parts, ",")
}

func (tagsValue) Type() string { return "key=value" }

// intPtrValue is an int flag that stays nil unless given.
type intPtrValue struct{ p **int }

func (v intPtrValue) Set(s string) error {
	n, err := strconv.Atoi(s)
	if err != nil {
		return errors.New("want a whole number")
	}
	*v.p = &n
	return nil
}

func (v intPtrValue) String() string {
	if v.p == nil || *v.p == nil {
		return ""
	}
	return strconv.Itoa(**v.p)
}

func (intPtrValue) Type() string { return "int" }

// boolPtrValue is a bool flag that stays nil unless given, so that
// --has-errors=false can send false.
type boolPtrValue struct{ p **bool }

func (v boolPtrValue) Set(s string) error {
	b, err := strconv.ParseBool(s)
	if err != nil {
		return errors.New("want true or false")
	}
	*v.p = &b
	return nil
}

func (v boolPtrValue) String() string {
	if v.p == nil || *v.p == nil {
		return ""
	}
	return strconv.FormatBool(**v.p)
}

func (boolPtrValue) Type() string { return "bool" }

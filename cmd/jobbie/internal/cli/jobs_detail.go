package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/wire"
)

// How `jobbie inspect` shows a job: the API's JSON shape for scripts, a
// list of fields, errors and timeline for people.

// jobDetailJSON is the job as GET /api/v1/jobs/{id} answers with it (the
// SDK's detail turned back into the wire shape), so -o json reads like
// the API and like `jobbie search -o json`.
func jobDetailJSON(d *client.JobDetail) wire.JobDetail {
	ptr := func(s string) *string {
		if s == "" {
			return nil
		}
		return &s
	}
	dur := func(d time.Duration) string {
		if d == 0 {
			return ""
		}
		return wire.FormatDuration(d)
	}
	w := wire.JobDetail{
		ID: d.ID, Queue: d.Queue, Payload: d.Payload, State: d.State, Priority: d.Priority,
		Attempt: d.Attempt, MaxRetries: d.MaxRetries, RetryBackoff: d.RetryBackoff,
		RetryBaseDelay: dur(d.RetryBaseDelay), RetryMaxDelay: dur(d.RetryMaxDelay),
		ScheduledAt: d.ScheduledAt, StartedAt: d.StartedAt, CompletedAt: d.CompletedAt, FailedAt: d.FailedAt,
		NextAttemptAt: d.NextAttemptAt, LeaseExpiresAt: d.LeaseExpiresAt, ExpireAfter: ptr(dur(d.ExpireAfter)),
		ExpiresAt: d.ExpiresAt, LeaseDuration: ptr(dur(d.LeaseDuration)), UniqueKey: ptr(d.UniqueKey),
		ConcurrencyKey: ptr(d.ConcurrencyKey), FairnessKey: ptr(d.FairnessKey), BatchID: ptr(d.BatchID),
		ChainID: ptr(d.ChainID), DependsOn: d.DependsOn, CancelReason: ptr(d.CancelReason), Tags: d.Tags,
		Checkpoint: d.Checkpoint, Result: d.Result, Errors: d.Errors, Worker: d.Worker,
		DeadReason: ptr(d.DeadReason), UpdatedAt: d.UpdatedAt, Cancelling: d.Cancelling,
		CancelledAt: d.CancelledAt, DiedAt: d.DiedAt, Timeline: d.Timeline,
	}
	if !d.CreatedAt.IsZero() {
		w.CreatedAt = &d.CreatedAt
	}
	if d.UniquePeriod > 0 {
		p := int64(d.UniquePeriod / time.Second)
		w.UniquePeriod = &p
	}
	if d.ChainID != "" {
		w.ChainStep = &d.ChainStep
	}
	if d.Progress != nil {
		w.Progress, _ = json.Marshal(d.Progress) // three plain fields: cannot fail
	}
	if w.Errors == nil {
		w.Errors = []client.JobError{}
	}
	if w.Timeline == nil {
		w.Timeline = []client.TimelineEvent{}
	}
	return w
}

// printJobDetail writes the job's fields (those it has), then its errors
// and its timeline as tables.
func printJobDetail(w io.Writer, d *client.JobDetail) error {
	tw := newTable(w)
	field := func(name, value string) {
		if value != "" && value != "-" {
			fmt.Fprintf(tw, "%s\t%s\n", name, value)
		}
	}
	state := d.State
	switch {
	case d.Cancelling:
		state += " (cancel requested)"
	case d.DeadReason != "":
		state += " (" + d.DeadReason + ")"
	case d.CancelReason != "":
		state += " (" + d.CancelReason + ")"
	}
	field("ID", d.ID)
	field("QUEUE", d.Queue)
	field("STATE", state)
	field("PRIORITY", d.Priority)
	field("ATTEMPT", fmt.Sprintf("%d (max retries %d)", d.Attempt, d.MaxRetries))
	field("CREATED", stamp(&d.CreatedAt))
	field("SCHEDULED", stamp(d.ScheduledAt))
	field("STARTED", stamp(d.StartedAt))
	field("COMPLETED", stamp(d.CompletedAt))
	field("FAILED", stamp(d.FailedAt))
	field("NEXT ATTEMPT", stamp(d.NextAttemptAt))
	field("LEASE EXPIRES", stamp(d.LeaseExpiresAt))
	field("EXPIRES", stamp(d.ExpiresAt))
	field("CANCELLED", stamp(d.CancelledAt))
	field("DIED", stamp(d.DiedAt))
	if d.Worker != nil {
		field("WORKER", d.Worker.ID+" ("+orDash(d.Worker.Hostname)+")")
	}
	field("TAGS", tagList(d.Tags))
	field("UNIQUE KEY", d.UniqueKey)
	field("CONCURRENCY KEY", d.ConcurrencyKey)
	field("FAIRNESS KEY", d.FairnessKey)
	field("BATCH", d.BatchID)
	if d.ChainID != "" {
		field("CHAIN", d.ChainID+" step "+strconv.Itoa(d.ChainStep))
	}
	field("DEPENDS ON", strings.Join(d.DependsOn, ", "))
	if p := d.Progress; p != nil {
		prog := fmt.Sprintf("%d/%d", p.Current, p.Total)
		if p.Message != "" {
			prog += " " + oneLine(p.Message, 80)
		}
		field("PROGRESS", prog)
	}
	field("PAYLOAD", compactJSON(d.Payload, 200))
	field("RESULT", compactJSON(d.Result, 200))
	if len(d.Checkpoint) > 0 {
		field("CHECKPOINT", compactJSON(d.Checkpoint, 200))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(d.Errors) > 0 {
		fmt.Fprintln(w, "\nERRORS")
		fmt.Fprintln(tw, "ATTEMPT\tAT\tERROR")
		for _, e := range d.Errors {
			fmt.Fprintf(tw, "%d\t%s\t%s\n", e.Attempt, stamp(&e.At), orDash(oneLine(e.Error, 100)))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	if len(d.Timeline) > 0 {
		fmt.Fprintln(w, "\nTIMELINE")
		fmt.Fprintln(tw, "AT\tEVENT\tDETAIL")
		for _, e := range d.Timeline {
			fmt.Fprintf(tw, "%s\t%s\t%s\n", e.At.UTC().Format("2006-01-02T15:04:05.000Z"), e.Event, orDash(oneLine(e.Detail, 100)))
		}
	}
	return tw.Flush()
}

// compactJSON is raw on one line, cut to n runes; "" when absent.
func compactJSON(raw json.RawMessage, n int) string {
	if len(raw) == 0 {
		return ""
	}
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return oneLine(string(raw), n)
	}
	return oneLine(b.String(), n)
}

// tagList is "k=v, k2=v2", sorted.
func tagList(tags map[string]string) string {
	parts := make([]string, 0, len(tags))
	for k, v := range tags {
		parts = append(parts, k+"="+v)
	}
	slices.Sort(parts)
	return strings.Join(parts, ", ")
}

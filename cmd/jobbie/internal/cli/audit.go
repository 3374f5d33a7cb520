package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// `jobbie audit`: a page of the tenant's audit log, or all of it as JSON
// lines (docs/api/audit.md), through the SDK's Audit and AuditAll. Every
// filter is checked here first, so a typo costs no request.

type auditFlags struct {
	action, keyID, object, result, cursor string
	from, to                              whenValue
	limit                                 int
	export, newest                        bool
}

func auditCmd() *cobra.Command {
	var f auditFlags
	cmd := &cobra.Command{
		Use:   "audit",
		Short: "Read the audit log: who did what, and how it ended",
		Long: `audit prints a page of the tenant's audit log, oldest first (newest
first with --newest), with the filters given; the next page is --cursor
with the cursor it printed (in the same order).
--export prints every record the filters select as JSON lines, following
the cursors to the end. --from/--since and --to/--until take an RFC 3339
time, a date, or a duration back from now ("24h").

  jobbie audit --since 24h
  jobbie audit --newest --limit 20          # the last 20 things done
  jobbie audit --action queue.manage --object queue/emails
  jobbie audit --key-id key_01… --result error -o json
  jobbie audit --from 2026-11-01 --to 2026-12-01 --export > november.jsonl

--namespace names the namespace whose records are read, and keeps
control's records to it (without it: the key's default namespace, and
control's records of every namespace). Needs audit.read (owner, admin).`,
		Args: cobra.NoArgs,
	}
	api := addConn(cmd, gatewayAPI)
	fs := cmd.Flags()
	fs.StringVar(&f.action, "action", "", "records of this RBAC action (queue.manage, key.manage, …)")
	fs.StringVar(&f.keyID, "key-id", "", "records of this key")
	fs.StringVar(&f.object, "object", "", `records of this object: its type ("job") or type/id ("job/job_01…")`)
	fs.StringVar(&f.result, "result", "", `"ok", "error" (any refusal or failure), or an error code ("forbidden")`)
	fs.Var(&f.from, "from", "records at or after this time (RFC 3339, a date, or a duration ago: 24h)")
	fs.Var(&f.from, "since", "the same as --from")
	fs.Var(&f.to, "to", "records before this time (as --from)")
	fs.Var(&f.to, "until", "the same as --to")
	fs.IntVar(&f.limit, "limit", 0, fmt.Sprintf("records a page, 1 to %d (default %d)", wire.MaxAuditLimit, wire.DefaultAuditLimit))
	fs.StringVar(&f.cursor, "cursor", "", "the page after the one that printed this cursor")
	fs.BoolVar(&f.export, "export", false, "print every record as JSON lines, following cursors (--limit is the page size)")
	fs.BoolVar(&f.newest, "newest", false, "newest first (a cursor goes on in the order that gave it)")
	cmd.MarkFlagsMutuallyExclusive("from", "since")
	cmd.MarkFlagsMutuallyExclusive("to", "until")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		q, err := f.query(time.Now())
		if err != nil {
			return err
		}
		if cmd.Flags().Changed("namespace") {
			q.Namespace = api.Namespace()
		}
		if f.export {
			if api.output != OutTable {
				return fmt.Errorf("--export prints JSON lines: drop -o %s", api.output)
			}
			return exportAudit(cmd, api, q)
		}
		return runAPI(cmd, api, "audit", tenancy.ActAuditRead,
			func(ctx context.Context, c *client.Client) (*client.AuditPage, error) { return c.Audit(ctx, q) },
			printAudit)
	}
	return cmd
}

var (
	auditObject = regexp.MustCompile(`^[a-z_]+(/\S+)?$`)
	auditResult = regexp.MustCompile(`^[a-z0-9_]+$`)
)

// query checks the flags (now for durations back) and makes the query.
func (f *auditFlags) query(now time.Time) (client.AuditQuery, error) {
	q := client.AuditQuery{AuditFilter: wire.AuditFilter{Action: f.action, KeyID: f.keyID, Object: f.object, Result: f.result},
		Limit: f.limit, Cursor: f.cursor, Newest: f.newest}
	if f.action != "" && !slices.Contains(tenancy.AllActions, tenancy.Action(f.action)) {
		names := make([]string, len(tenancy.AllActions))
		for i, a := range tenancy.AllActions {
			names[i] = string(a)
		}
		return q, fmt.Errorf("--action %q is not an action: the actions are %s", f.action, strings.Join(names, ", "))
	}
	if f.keyID != "" {
		if err := CheckID("key", f.keyID); err != nil {
			return q, fmt.Errorf("--key-id: %w", err)
		}
	}
	if f.object != "" && !auditObject.MatchString(f.object) {
		return q, fmt.Errorf(`--object %q: want a type ("job") or type/id ("job/job_01…")`, f.object)
	}
	if f.result != "" && !auditResult.MatchString(f.result) {
		return q, fmt.Errorf(`--result %q: want "ok", "error" or an error code ("not_found")`, f.result)
	}
	if f.limit != 0 && (f.limit < 1 || f.limit > wire.MaxAuditLimit) {
		return q, fmt.Errorf("--limit must be from 1 to %d, not %d", wire.MaxAuditLimit, f.limit)
	}
	q.From, q.To = f.from.at(now), f.to.at(now)
	if !q.From.IsZero() && !q.To.IsZero() && !q.To.After(q.From) {
		return q, fmt.Errorf("--to (%s) must be after --from (%s)", q.To.Format(time.RFC3339), q.From.Format(time.RFC3339))
	}
	return q, nil
}

// exportAudit prints every record q selects, one JSON object a line.
func exportAudit(cmd *cobra.Command, api *Conn, q client.AuditQuery) error {
	c, err := api.client()
	if err != nil {
		return err
	}
	defer c.CloseIdleConnections()
	enc := json.NewEncoder(cmd.OutOrStdout())
	for r, err := range c.AuditAll(cmd.Context(), q) {
		if err != nil {
			return fmt.Errorf("audit: %w", refused(err, tenancy.ActAuditRead))
		}
		if err := enc.Encode(r); err != nil {
			return err
		}
	}
	return nil
}

func printAudit(w io.Writer, p *client.AuditPage) error {
	tw := newTable(w)
	fmt.Fprintln(tw, "TIME\tKEY\tACTION\tOBJECT\tNAMESPACE\tRESULT\tSTATUS")
	for _, r := range p.Records {
		key := r.KeyID
		if r.KeyName != "" {
			key += "(" + r.KeyName + ")"
		}
		obj := r.ObjectType
		if r.ObjectID != "" {
			obj += "/" + r.ObjectID
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%d\n", stamp(&r.Time), orDash(key), r.Action,
			orDash(obj), orDash(r.Namespace), r.Result, r.Status)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if p.Cursor != "" {
		_, err := fmt.Fprintf(w, "more: --cursor %s\n", p.Cursor)
		return err
	}
	return nil
}

// whenValue is a time flag: RFC 3339, a date (midnight UTC), or a
// duration back from when the command runs.
type whenValue struct {
	t   time.Time
	ago time.Duration
	s   string
}

func (v *whenValue) Set(s string) error {
	s = strings.TrimSpace(s)
	if d, err := time.ParseDuration(s); err == nil {
		if d <= 0 {
			return fmt.Errorf("a duration back from now must be positive, not %s", s)
		}
		*v = whenValue{ago: d, s: s}
		return nil
	}
	var t *time.Time
	if err := (timeValue{&t}).Set(s); err != nil {
		return fmt.Errorf("want RFC 3339 (2026-02-10T15:04:05Z), a date (2026-02-10) or a duration ago (24h)")
	}
	*v = whenValue{t: *t, s: s}
	return nil
}

// at is the time v names, zero when unset.
func (v *whenValue) at(now time.Time) time.Time {
	if v.ago > 0 {
		return now.Add(-v.ago)
	}
	return v.t
}

func (v *whenValue) String() string { return v.s }
func (*whenValue) Type() string     { return "time" }

package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// `jobbie alerts`: the namespace's alert rules and their state
// (docs/api/alerts.md). The Go SDK has no alert calls yet, so these
// commands make their requests here, with the connection's URL, key,
// namespace and CA, and read a refusal into a client.Error as the SDK
// would.

// alertFlags are a rule's settings for create and update.
type alertFlags struct {
	kind, queue, dur string
	threshold        float64
	minCount         int
	disabled         bool
}

func alertsCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "alerts",
		Short: "List, create, change or delete alert rules, and see what fires",
		Long: `alerts lists the namespace's alert rules and their state. A rule fires on a
queue when its condition holds, and resolves when it no longer does; both
are the webhook events alert.firing and alert.resolved.

  jobbie alerts create backlog --kind queue_depth_above --queue emails --threshold 1000 --for 5m
  jobbie alerts create stuck --kind oldest_pending_above --queue emails --for 10m
  jobbie alerts create dying --kind dead_increase --threshold 5 --for 15m          (every queue)
  jobbie alerts create flaky --kind failure_rate_above --queue emails --threshold 20 --for 10m --min-count 50
  jobbie alerts create idle --kind no_worker --queue emails --for 2m
  jobbie alerts get backlog
  jobbie alerts update backlog --kind queue_depth_above --queue emails --threshold 5000 --for 5m
  jobbie alerts delete backlog

Reading needs namespace.read, changing queue.manage, with a key whose
role covers every queue of the namespace.`,
		Args: cobra.NoArgs,
	}
	api := addConn(cmd, gatewayAPI)
	list := func(cmd *cobra.Command, _ []string) error {
		return runAPI(cmd, api, "alerts", tenancy.ActNamespaceRead,
			func(ctx context.Context, _ *client.Client) ([]wire.AlertRule, error) {
				var l wire.AlertRuleList
				err := alertCall(ctx, api, http.MethodGet, "", nil, &l)
				if l.Alerts == nil {
					l.Alerts = []wire.AlertRule{}
				}
				return l.Alerts, err
			}, printAlerts)
	}
	cmd.RunE = list
	get := &cobra.Command{Use: "get <name>", Short: "Show a rule, the queues it fires on and its last values", Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return alertRun(cmd, api, args[0], tenancy.ActNamespaceRead, http.MethodGet, nil)
		}}
	del := &cobra.Command{Use: "delete <name>", Short: "Delete a rule; each queue it fires on resolves", Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := args[0]
			if err := tenancy.ValidateAlertName(name); err != nil {
				return err
			}
			return runAPI(cmd, api, "alert "+name, tenancy.ActQueueManage,
				func(ctx context.Context, _ *client.Client) (deleted, error) {
					return deleted{ID: name, Deleted: true}, alertCall(ctx, api, http.MethodDelete, "/"+url.PathEscape(name), nil, nil)
				},
				func(w io.Writer, d deleted) error {
					_, err := fmt.Fprintf(w, "alert rule %s deleted\n", d.ID)
					return err
				})
		}}
	cmd.AddCommand(&cobra.Command{Use: "list", Short: "List the namespace's rules", Args: cobra.NoArgs, RunE: list},
		get, alertWriteCmd(api, true), alertWriteCmd(api, false), del)
	return cmd
}

// alertWriteCmd is create (POST) or update (PUT, the whole rule).
func alertWriteCmd(api *Conn, create bool) *cobra.Command {
	var f alertFlags
	use, short, method := "create <name>", "Add a rule", http.MethodPost
	if !create {
		use, short, method = "update <name>", "Replace a rule's settings (give them all, as on create)", http.MethodPut
	}
	cmd := &cobra.Command{Use: use, Short: short, Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			req := wire.AlertRuleRequest{Kind: f.kind, Queue: f.queue, Threshold: f.threshold, For: f.dur, MinCount: f.minCount}
			if create {
				req.Name = args[0]
			}
			if f.disabled {
				req.Enabled = new(false)
			}
			return alertRun(cmd, api, args[0], tenancy.ActQueueManage, method, &req)
		}}
	fs := cmd.Flags()
	fs.StringVar(&f.kind, "kind", "", "queue_depth_above, oldest_pending_above, dead_increase, failure_rate_above or no_worker")
	fs.StringVar(&f.queue, "queue", "", "the queue it watches (none: every queue, each on its own)")
	fs.Float64Var(&f.threshold, "threshold", 0, "jobs (queue_depth_above, dead_increase) or a percentage (failure_rate_above)")
	fs.StringVar(&f.dur, "for", "", `how long the condition holds, the age, or the window ("5m")`)
	fs.IntVar(&f.minCount, "min-count", 0, "failure_rate_above: jobs that must have finished within --for (default 10)")
	fs.BoolVar(&f.disabled, "disabled", false, "keep the rule without evaluating it")
	return cmd
}

// alertRun sends one rule's request (body nil: none) and prints the rule
// it answers.
func alertRun(cmd *cobra.Command, api *Conn, name string, act tenancy.Action, method string, body any) error {
	if err := tenancy.ValidateAlertName(name); err != nil {
		return err
	}
	path := "/" + url.PathEscape(name)
	if method == http.MethodPost {
		path = ""
	}
	return runAPI(cmd, api, "alert "+name, act,
		func(ctx context.Context, _ *client.Client) (*wire.AlertRule, error) {
			var r wire.AlertRule
			if err := alertCall(ctx, api, method, path, body, &r); err != nil {
				return nil, err
			}
			return &r, nil
		}, printAlert)
}

// alertCall makes one request under /api/v1/alerts; a refusal is a
// *client.Error.
func alertCall(ctx context.Context, api *Conn, method, path string, in, out any) error {
	base, key, ns, err := api.Target()
	if err != nil {
		return err
	}
	hc, err := api.httpClient()
	if err != nil {
		return err
	}
	if hc == nil {
		hc = &http.Client{Timeout: 30 * time.Second}
	}
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimRight(base, "/")+"/api/v1/alerts"+path, body)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("User-Agent", "jobbie-cli")
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if ns != "" {
		req.Header.Set(wire.NamespaceHeader, ns)
	}
	res, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(res.Body, 8<<20))
	if err != nil {
		return err
	}
	if res.StatusCode >= 300 {
		var e struct {
			Error struct {
				Code, Message, Field string
				RequestID            string `json:"request_id"`
			} `json:"error"`
		}
		_ = json.Unmarshal(raw, &e)
		ce := &client.Error{Status: res.StatusCode, Code: e.Error.Code, Message: e.Error.Message, Field: e.Error.Field, RequestID: e.Error.RequestID}
		if s, err := strconv.Atoi(res.Header.Get("Retry-After")); err == nil {
			ce.RetryAfter = time.Duration(s) * time.Second
		}
		if ce.Message == "" {
			ce.Message = http.StatusText(res.StatusCode)
		}
		return ce
	}
	if out == nil || len(raw) == 0 {
		return nil
	}
	return json.Unmarshal(raw, out)
}

func printAlerts(w io.Writer, rs []wire.AlertRule) error {
	tw := newTable(w)
	fmt.Fprintln(tw, "NAME\tKIND\tQUEUE\tTHRESHOLD\tFOR\tENABLED\tSTATE\tSINCE")
	for _, r := range rs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%t\t%s\t%s\n", r.Name, r.Kind, orAll(r.Queue), threshold(&r), r.For, r.Enabled, r.State, stamp(r.Since))
	}
	return tw.Flush()
}

func printAlert(w io.Writer, r *wire.AlertRule) error {
	tw := newTable(w)
	fmt.Fprintf(tw, "ALERT\t%s\nKIND\t%s\nQUEUE\t%s\nTHRESHOLD\t%s\nFOR\t%s\nENABLED\t%t\nSTATE\t%s\n",
		r.Name, r.Kind, orAll(r.Queue), threshold(r), r.For, r.Enabled, r.State)
	if r.MinCount > 0 {
		fmt.Fprintf(tw, "MIN COUNT\t%d\n", r.MinCount)
	}
	for _, f := range r.Firing {
		fmt.Fprintf(tw, "FIRING\t%s since %s (value %g)\n", f.Queue, stamp(&f.Since), f.Value)
	}
	for _, v := range r.Values {
		fmt.Fprintf(tw, "VALUE\t%s %g\n", v.Queue, v.Value)
	}
	fmt.Fprintf(tw, "EVALUATED\t%s\n", stamp(r.EvaluatedAt))
	return tw.Flush()
}

func orAll(queue string) string {
	if queue == "" {
		return "*"
	}
	return queue
}

// threshold is "-" for the kinds measured by --for alone.
func threshold(r *wire.AlertRule) string {
	if r.Kind == wire.AlertOldest || r.Kind == wire.AlertNoWorker {
		return "-"
	}
	return strconv.FormatFloat(r.Threshold, 'f', -1, 64)
}

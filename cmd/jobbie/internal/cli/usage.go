package cli

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/jobbie/jobbie/client"
)

// The tenant's usage, plan and invoices through the gateway: `jobbie
// usage`, `jobbie plan` and `jobbie invoices`. They need usage.read
// (owner, admin and billing keys); the plan and invoices cover the whole
// tenant, so they need it in every namespace.

// billingError is apiError with a hint on a 403, the one refusal whose
// fix is another key.
func billingError(err error) error {
	if client.IsForbidden(err) {
		msg, _ := strings.CutPrefix(err.Error(), "jobbie: ")
		return &wordedError{msg: msg + " (usage, the plan and invoices need a key with usage.read: owner, admin or billing)", err: err}
	}
	return apiError(err)
}

func usageCmd() *cobra.Command {
	var q client.UsageQuery
	var from, to *time.Time
	cmd := &cobra.Command{
		Use:   "usage",
		Short: "Show the tenant's usage per namespace and hour or day, with totals",
		Long: `usage shows every meter per namespace and UTC hour (or day), the tenant's
periods (with api_requests, which are counted per tenant) and totals.
A period marked incomplete is still open, or not yet read from every
shard: its numbers can still grow.

  jobbie usage                                   # the last 24 hours, per hour
  jobbie usage --granularity day                 # the last 30 days, per day
  jobbie usage --from 2026-11-05 --to 2026-11-06 --namespace emails
  jobbie usage -o json                           # GET /api/v1/usage as it answers

Times are RFC 3339 or a date (midnight UTC); the range widens to whole
buckets. The tenant's rows list the periods that used something or are
incomplete.`,
		Args: cobra.NoArgs,
	}
	api := addConn(cmd, gatewayAPI)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		c, err := api.client()
		if err != nil {
			return err
		}
		defer c.CloseIdleConnections()
		if from != nil {
			q.From = *from
		}
		if to != nil {
			q.To = *to
		}
		q.Namespace = api.Namespace()
		u, err := c.GetUsage(cmd.Context(), q)
		if err != nil {
			return billingError(err)
		}
		if api.json() {
			return writeJSON(cmd.OutOrStdout(), u)
		}
		return printUsage(cmd.OutOrStdout(), u, q.Namespace == "")
	}
	f := cmd.Flags()
	f.Var(timeValue{&from}, "from", "start of the range (default: 24 hours, or 30 days with --granularity day, before --to)")
	f.Var(timeValue{&to}, "to", "end of the range (default: now)")
	f.StringVar(&q.Granularity, "granularity", client.GranularityHour, "bucket size: hour or day")
	return cmd
}

// usageColumns are the meters as the table shows them, in the API's order.
const usageColumns = "ENQUEUED\tEXECUTIONS\tCOMPLETED\tFAILED\tDEAD\tACTIVE SECONDS\tSTORAGE BYTE-HOURS\tAPI REQUESTS\tPUSH DELIVERIES\tWEBHOOK DELIVERIES"

func meterCells(m client.UsageMeters, apiRequests bool) string {
	api := "-" // counted per tenant: a namespace has none
	if apiRequests {
		api = strconv.FormatInt(m.APIRequests, 10)
	}
	return fmt.Sprintf("%d\t%d\t%d\t%d\t%d\t%s\t%s\t%s\t%d\t%d", m.JobsEnqueued, m.Executions, m.JobsCompleted, m.JobsFailed, m.JobsDead,
		milli(m.ActiveJobSeconds), milli(m.StorageByteHours), api, m.PushDeliveries, m.WebhookDeliveries)
}

// milli shows a derived meter to three decimals, and a small one that
// would round to 0 as such (the JSON has it exactly).
func milli(v float64) string {
	if v > 0 && v < 0.0005 {
		return "<0.001"
	}
	return strconv.FormatFloat(math.Round(v*1000)/1000, 'f', -1, 64)
}

// tenantRow is how the tenant's own rows are named: no namespace name has
// parentheses.
const tenantRow = "(tenant)"

// printUsage writes the table: each namespace's buckets and its total,
// then the tenant's buckets that used something or are incomplete, then
// the tenant's total. api_requests are the tenant's, not a namespace's,
// and an answer about one namespace has none (wholeTenant false).
func printUsage(w io.Writer, u *client.Usage, wholeTenant bool) error {
	bucket := func(t time.Time) string {
		if u.Granularity == client.GranularityDay {
			return t.UTC().Format(time.DateOnly)
		}
		return t.UTC().Format("2006-01-02T15:04Z")
	}
	fmt.Fprintf(w, "usage from %s to %s, per %s (UTC)\n", u.From.UTC().Format(time.RFC3339), u.To.UTC().Format(time.RFC3339), u.Granularity)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAMESPACE\tPERIOD\t"+usageColumns+"\tINCOMPLETE")
	yes := func(b bool) string {
		if b {
			return "yes"
		}
		return "-"
	}
	for _, nm := range u.Namespaces {
		for _, b := range nm.Buckets {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", nm.Namespace, bucket(b.Start), meterCells(b.Meters, false), yes(b.Incomplete))
		}
		fmt.Fprintf(tw, "%s\ttotal\t%s\t-\n", nm.Namespace, meterCells(nm.Totals, false))
	}
	var incomplete []string
	for _, b := range u.Tenant {
		if b.Incomplete {
			incomplete = append(incomplete, bucket(b.Start))
		}
		if b.Incomplete || b.Meters != (client.UsageMeters{}) {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", tenantRow, bucket(b.Start), meterCells(b.Meters, wholeTenant), yes(b.Incomplete))
		}
	}
	fmt.Fprintf(tw, "%s\ttotal\t%s\t-\n", tenantRow, meterCells(u.Totals, wholeTenant))
	if err := tw.Flush(); err != nil {
		return err
	}
	switch {
	case len(u.Namespaces) == 0:
		fmt.Fprintln(w, "no namespace used anything in this range")
	case len(incomplete) == 0:
		fmt.Fprintln(w, "every period is complete")
	}
	if len(incomplete) > 0 {
		fmt.Fprintf(w, "incomplete (may still grow): %s\n", strings.Join(incomplete, ", "))
	}
	return nil
}

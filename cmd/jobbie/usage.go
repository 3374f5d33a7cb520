package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
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
	api := addAPIFlags(cmd)
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
		q.Namespace = api.flagOrEnv("namespace", envNamespace, api.namespace)
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
const usageColumns = "ENQUEUED\tEXECUTIONS\tCOMPLETED\tFAILED\tDEAD\tACTIVE SECONDS\tSTORAGE BYTE-HOURS\tAPI REQUESTS"

func meterCells(m client.UsageMeters, apiRequests bool) string {
	api := "-" // counted per tenant: a namespace has none
	if apiRequests {
		api = strconv.FormatInt(m.APIRequests, 10)
	}
	return fmt.Sprintf("%d\t%d\t%d\t%d\t%d\t%s\t%s\t%s", m.JobsEnqueued, m.Executions, m.JobsCompleted, m.JobsFailed, m.JobsDead,
		milli(m.ActiveJobSeconds), milli(m.StorageByteHours), api)
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

func planCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "plan",
		Short: "Show the tenant's plan: prices, included amounts, limits, and a pending change",
		Args:  cobra.NoArgs,
	}
	api := addAPIFlags(cmd)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		c, err := api.client()
		if err != nil {
			return err
		}
		defer c.CloseIdleConnections()
		tp, err := c.GetPlan(cmd.Context())
		if err != nil {
			return billingError(err)
		}
		if api.json() {
			return writeJSON(cmd.OutOrStdout(), tp)
		}
		return printTenantPlan(cmd.OutOrStdout(), tp)
	}
	return cmd
}

func printTenantPlan(w io.Writer, tp *client.TenantPlan) error {
	fmt.Fprintf(w, "tenant %s: plan %s since %s\n", tp.TenantID, planName(&tp.Plan), tp.Since.UTC().Format(time.RFC3339))
	if tp.Next != nil && tp.NextFrom != nil {
		fmt.Fprintf(w, "then plan %s from %s\n", planName(tp.Next), tp.NextFrom.UTC().Format(time.RFC3339))
	}
	if err := printPlanTerms(w, &tp.Plan); err != nil {
		return err
	}
	if tp.Next != nil {
		fmt.Fprintf(w, "\nnext plan, %s:\n", tp.Next.Name)
		return printPlanTerms(w, tp.Next)
	}
	return nil
}

func planName(p *client.Plan) string {
	s := fmt.Sprintf("%s (version %d, %s)", p.Name, p.Version, p.Currency)
	if p.Description != "" {
		s += ": " + oneLine(p.Description, 80)
	}
	return s
}

// printPlanTerms writes a plan's prices and included amounts per meter,
// then the limits it sets.
func printPlanTerms(w io.Writer, p *client.Plan) error {
	var meters []string
	for m := range p.Prices {
		meters = append(meters, m)
	}
	for m := range p.Included {
		if _, ok := p.Prices[m]; !ok {
			meters = append(meters, m)
		}
	}
	slices.Sort(meters)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	if len(meters) == 0 {
		fmt.Fprintln(w, "no meter is priced")
	} else {
		fmt.Fprintf(tw, "METER\tPRICE (%s minor units)\tPER\tINCLUDED PER MONTH\n", p.Currency)
		for _, m := range meters {
			price, per := "-", "-"
			if pr, ok := p.Prices[m]; ok {
				price, per = strconv.FormatInt(pr.Price, 10), strconv.FormatInt(pr.Unit, 10)
			}
			incl := "-"
			if n, ok := p.Included[m]; ok {
				incl = strconv.FormatInt(n, 10)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", m, price, per, incl)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	l := p.Limits
	var limits []string
	for _, lim := range []struct {
		name string
		v    *int64
	}{
		{"requests_per_second", l.RequestsPerSecond}, {"enqueues_per_second", l.EnqueuesPerSecond},
		{"max_pending_jobs", l.MaxPendingJobs}, {"max_namespaces", l.MaxNamespaces}, {"max_keys", l.MaxKeys},
		{"max_schedules", l.MaxSchedules}, {"max_payload_bytes", l.MaxPayloadBytes}, {"monthly_executions", l.MonthlyExecutions},
	} {
		if lim.v != nil {
			limits = append(limits, fmt.Sprintf("%s %d", lim.name, *lim.v))
		}
	}
	if l.MonthlyExecutionsEnforcement != "" {
		limits = append(limits, "monthly_executions_enforcement "+l.MonthlyExecutionsEnforcement)
	}
	if len(limits) == 0 {
		fmt.Fprintln(w, "limits: none")
	} else {
		fmt.Fprintln(w, "limits: "+strings.Join(limits, ", "))
	}
	return nil
}

func invoicesCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "invoices",
		Short: "List the tenant's invoices, show one, or export one as CSV",
		Long: `An invoice is a UTC month of usage priced by the tenant's plan. It is
open while the month runs (and until every shard has closed it), then
closed: frozen for good. Amounts are minor units of its currency.

  jobbie invoices list
  jobbie invoices upcoming              # this month so far
  jobbie invoices get inv_t_…_2026-10
  jobbie invoices csv inv_t_…_2026-10 --out 2026-10.csv`,
	}
	api := addAPIFlags(cmd)
	list := &cobra.Command{
		Use: "list", Short: "List every month's invoice, the running month first", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := api.client()
			if err != nil {
				return err
			}
			defer c.CloseIdleConnections()
			invs, err := c.ListInvoices(cmd.Context())
			if err != nil {
				return billingError(err)
			}
			if api.json() {
				return writeJSON(cmd.OutOrStdout(), invs) // an array, whatever its length
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tMONTH\tSTATUS\tTOTAL (minor units)\tCURRENCY")
			for _, s := range invs {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\n", s.ID, s.Period.Start.UTC().Format("2006-01"), s.Status, s.Total, s.Currency)
			}
			return tw.Flush()
		},
	}
	show := func(get func(cmd *cobra.Command, c *client.Client, args []string) (*client.Invoice, error)) func(*cobra.Command, []string) error {
		return func(cmd *cobra.Command, args []string) error {
			c, err := api.client()
			if err != nil {
				return err
			}
			defer c.CloseIdleConnections()
			inv, err := get(cmd, c, args)
			if err != nil {
				return billingError(err)
			}
			if api.json() {
				return writeJSON(cmd.OutOrStdout(), inv)
			}
			return printInvoice(cmd.OutOrStdout(), inv)
		}
	}
	get := &cobra.Command{
		Use: "get ID", Short: "Show an invoice: its plan stretches, a line per meter and namespace, its total", Args: cobra.ExactArgs(1),
		RunE: show(func(cmd *cobra.Command, c *client.Client, args []string) (*client.Invoice, error) {
			return c.GetInvoice(cmd.Context(), args[0])
		}),
	}
	upcoming := &cobra.Command{
		Use: "upcoming", Short: "Show the running month's invoice so far", Args: cobra.NoArgs,
		RunE: show(func(cmd *cobra.Command, c *client.Client, _ []string) (*client.Invoice, error) {
			return c.UpcomingInvoice(cmd.Context())
		}),
	}
	cmd.AddCommand(list, get, upcoming, invoicesCSVCmd(api))
	return cmd
}

func invoicesCSVCmd(api *apiFlags) *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use: "csv ID", Short: "Write an invoice as CSV (a header, then a row per line) to --out or stdout", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if api.json() {
				return errors.New("csv writes CSV: --output json does not apply (use invoices get ID -o json)")
			}
			c, err := api.client()
			if err != nil {
				return err
			}
			defer c.CloseIdleConnections()
			w := cmd.OutOrStdout()
			if out != "" {
				f, err := os.OpenFile(out, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
				if err != nil {
					return err
				}
				defer f.Close()
				w = f
			}
			n, err := c.InvoiceCSV(cmd.Context(), args[0], w)
			if err != nil {
				if out != "" {
					_ = os.Remove(out)
				}
				return billingError(err)
			}
			if out != "" {
				fmt.Fprintf(cmd.ErrOrStderr(), "%d bytes\n", n)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&out, "out", "", "file to write (it must not exist)")
	return cmd
}

// printInvoice writes an invoice's header, plan stretches, lines and
// totals. Quantities are the exact integers of the API, in their unit.
func printInvoice(w io.Writer, inv *client.Invoice) error {
	fmt.Fprintf(w, "invoice %s (%s), tenant %s\n", inv.ID, inv.Status, inv.TenantID)
	fmt.Fprintf(w, "period %s to %s, amounts in %s minor units\n",
		inv.Period.Start.UTC().Format(time.RFC3339), inv.Period.End.UTC().Format(time.RFC3339), inv.Currency)
	for _, p := range inv.Plans {
		fmt.Fprintf(w, "plan %s version %d (%s) from %s to %s\n", p.Name, p.Version, p.Currency,
			p.From.UTC().Format(time.RFC3339), p.To.UTC().Format(time.RFC3339))
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PLAN\tMETER\tNAMESPACE\tQUANTITY\tUNIT\tINCLUDED\tBILLABLE\tPRICE\tPER\tBILLED UNITS\tAMOUNT")
	for _, l := range inv.Lines {
		fmt.Fprintf(tw, "%s v%d\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%d\t%s\t%d\n", l.Plan, l.PlanVersion, l.Meter, orDash(l.Namespace),
			l.Quantity, l.QuantityUnit, l.IncludedApplied, l.Billable, l.UnitPrice, l.Unit, l.BilledUnits, l.Amount)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(inv.Lines) == 0 {
		fmt.Fprintln(w, "no usage in this period")
	}
	fmt.Fprintf(w, "subtotal %d, total %d %s\n", inv.Subtotal, inv.Total, inv.Currency)
	g := inv.GeneratedFrom
	fmt.Fprintf(w, "generated from the ledger: %d entries, %d hours with usage, closed through %s\n", g.LedgerEntries, g.LedgerHours, g.ClosedThrough.UTC().Format(time.RFC3339))
	return nil
}

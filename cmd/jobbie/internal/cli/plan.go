package cli

import (
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

// The tenant's plan through the gateway: prices, included amounts and
// limits, and a change to come (usage.read on every namespace).

func planCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "plan",
		Short: "Show the tenant's plan: prices, included amounts, limits, and a pending change",
		Args:  cobra.NoArgs,
	}
	api := addConn(cmd, gatewayAPI)
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
	hours, events := l.EventRetention()
	fmt.Fprintf(w, "event log kept: %d h, at most %d events per namespace\n", hours, events)
	return nil
}
